"""Checks and expands a k9s plugin file the way k9s v0.50 reads it (internal/config/plugin.go, json/validator.go,
view/env.go of the k9s Go module in K9S_DIR), for e2e/tests/k9s_plugin.rs. Needs jsonschema and PyYAML (the
venv scripts/tools.sh makes).

  k9s_plugins.py validate FILE K9S_DIR   the file against k9s's plugins.json schema (the `plugins:` form), every
                                         plugin against plugin.json (which also refuses unknown keys), and no
                                         shortCut of a scope shared with k9s's own plugins/flux.yaml
  k9s_plugins.py expand FILE ENV_JSON    every plugin's command and args with k9s's variables substituted from
                                         ENV_JSON (a JSON object), as JSON: {name: {"command": ..., "args": [...]}}

Exit 0 when fine, 1 with one line per problem on stderr.
"""

import json
import os
import re
import sys

import jsonschema
import yaml


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def load_schema(k9s_dir, name):
    with open(os.path.join(k9s_dir, "internal/config/json/schemas", name), encoding="utf-8") as f:
        return json.load(f)


def errors_of(schema, doc):
    v = jsonschema.Draft7Validator(schema)
    return sorted(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in v.iter_errors(doc))


def upstream_keys(k9s_dir):
    """(shortCut, scope) pairs bound by k9s's own Flux plugin file; scope 'all' binds the key everywhere."""
    doc = load_yaml(os.path.join(k9s_dir, "plugins/flux.yaml"))
    pairs = set()
    for p in (doc.get("plugins") or {}).values():
        for s in p.get("scopes") or []:
            pairs.add((p.get("shortCut"), s))
    return pairs


def same_scope(a, b):
    # k9s matches a scope against the view's resource name and its aliases; a singular or plural spelling
    # of the same resource is the same view here (flux.yaml uses both "helmrelease" and "helmreleases").
    return a == b or a == "all" or b == "all" or a.rstrip("s") == b.rstrip("s")


def validate(path, k9s_dir):
    doc = load_yaml(path)
    problems = [f"plugins.json: {e}" for e in errors_of(load_schema(k9s_dir, "plugins.json"), doc)]
    plugins = (doc or {}).get("plugins") or {}
    if not plugins:
        problems.append("no plugins under `plugins:`")
    single = load_schema(k9s_dir, "plugin.json")
    theirs = upstream_keys(k9s_dir)
    seen = {}
    for name, p in plugins.items():
        problems += [f"{name}: plugin.json: {e}" for e in errors_of(single, p)]
        if not isinstance(p, dict):
            continue
        for scope in p.get("scopes") or []:
            key = p.get("shortCut")
            for their_key, their_scope in theirs:
                if key == their_key and same_scope(scope, their_scope):
                    problems.append(f"{name}: {key} in scope {scope} is bound by k9s's plugins/flux.yaml ({their_scope})")
            other = seen.get((key, scope))
            if other:
                problems.append(f"{name}: {key} in scope {scope} is also {other}'s")
            seen[(key, scope)] = name
    for p in problems:
        print(f"{path}: {p}", file=sys.stderr)
    return 1 if problems else 0


# k9s's view/env.go: $XXX, $!XXX, ${XXX} or ${!XXX}; the longest match is replaced first; a key that is not
# in the environment is left as it is; a boolean value is negated by "!".
GO_BOOLS = {s: True for s in ("1", "t", "T", "TRUE", "true", "True")} | {
    s: False for s in ("0", "f", "F", "FALSE", "false", "False")
}  # strconv.ParseBool
ENV_RX = re.compile(r"(\$(!?)([\w\-]+))|(\$\{(!?)([\w\-%/: ]+)})")


def substitute(arg, env):
    matches = sorted(ENV_RX.finditer(arg), key=lambda m: len(m.group(0)), reverse=True)
    for m in matches:
        key, inverse = (m.group(3), m.group(2) == "!") if m.group(1) else (m.group(6), m.group(5) == "!")
        if key.upper() not in env:
            continue
        v = env[key.upper()]
        if v in GO_BOOLS:
            v = "true" if (GO_BOOLS[v] != inverse) else "false"
        arg = arg.replace(m.group(0), v)
    return arg


def expand(path, env_json):
    env = {k.upper(): v for k, v in json.loads(env_json).items()}
    plugins = load_yaml(path)["plugins"]
    out = {
        name: {"command": p["command"], "args": [substitute(str(a), env) for a in p.get("args") or []]}
        for name, p in plugins.items()
    }
    json.dump(out, sys.stdout)
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "validate":
        return validate(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "expand":
        return expand(argv[2], argv[3])
    print("usage: k9s_plugins.py validate FILE K9S_DIR | expand FILE ENV_JSON", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
