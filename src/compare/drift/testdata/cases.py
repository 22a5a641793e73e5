# The inputs of go-vectors.jsonl, one JSON case a line (see govec/main.go for what each kind asks).
import json

def meta(labels=None, annotations=None, name="c"):
    m = {"name": name}
    if annotations is not None: m["annotations"] = annotations
    if labels is not None: m["labels"] = labels
    return {"metadata": m}

helm = {"app.kubernetes.io/managed-by": "Helm", "helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": "apps"}
ann = {"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "apps"}
cases = []
def diff(src, tgt): cases.append({"src": src, "tgt": tgt})
def remove(doc, paths): cases.append({"doc": doc, "paths": paths})
def sel(s, labels): cases.append({"selector": s, "labels": labels})

diff(meta(dict(helm, extra="1"), ann), meta(helm, ann))
diff(meta(dict(helm, **{"a.example.com/one": "x", "a.example.com/two": "y"}), ann), meta(helm, ann))
diff(meta(dict(helm, **{"a.example.com/one": "x", "a.example.com/two": "y", "b.example.com/three": "z", "c": "d"}), ann), meta(helm, ann))
diff(meta({"app": "x", "extra": "1"}, {}), meta({"app": "web"}, {}))
diff(meta({"app": "x"}, ann), meta({"app": "web"}, ann))
diff(meta(helm, {}), meta(helm, ann))
diff(meta(None, None), meta(helm, ann))
diff(meta(helm, None), meta(helm, ann))
diff(meta({"a/b": "1", "c~d": "2", "x<y": "3", "z": "4"}, None), meta({"a/b": "9", "c~d": "2", "x<y": "8", "z": "7"}, None))
diff(meta(None, {"note": "C:\\", "other": "v", "z": "1"}), meta(None, {"note": "C:\\", "other": "w", "z": "2"}))
diff(meta(None, {"q": "say \"hi\"", "r": "1"}), meta(None, {"q": "say \"hi\"", "r": "2"}))
diff(meta(None, {"u": "héllo ✓ <&>", "v": "1"}), meta(None, {"u": "héllo ✓ <&>", "v": "2", "w": "3"}))
diff({"spec": {"ports": [{"port": 80}, {"port": 81}, {"port": 82}]}}, {"spec": {"ports": [{"port": 80}, {"port": 90}]}})
diff({"l": [1, 2]}, {"l": [1, 2, 3, 4]})
diff({"a": 1}, [1])
diff({"a": 1}, {"a": 1.0})
diff({"a": {"b": 1}}, {"a": [1]})
diff({"a": None}, {"a": {}})
diff({"a": "x" * 300, "b": {"c": "1", "d": "2"}}, {"a": "x" * 300, "b": {"c": "3", "d": "4"}})
diff(meta(dict(helm, **{"k%d" % i: "v" for i in range(6)}), dict(ann, **{"deployment.kubernetes.io/revision": "3"})), meta(helm, ann))

doc = {"metadata": {"annotations": {"a/b": "1", "c~d": "2", "keep": "3", "": "empty"}},
       "spec": {"ports": [{"port": 1}, {"port": 2}, {"port": 3}], "n": 1, "z": None, "nest": [[1, 2], [3]]}, "": "root-empty"}
for p in ["/metadata/annotations/a~1b", "/metadata/annotations/c~0d", "/spec/ports/-1", "/spec/ports/0/port",
          "/nothing/here", "/spec/n/deeper", "/spec/ports/9", "/spec/ports/-9", "/spec/ports/-3", "no-slash", "a/spec",
          "", "/", "//x", "/metadata/annotations/", "/spec/ports/name", "/spec/ports/-", "/spec/ports/+1", "/spec/ports/01",
          "/spec/z/x", "/spec/nest/0/1", "/spec/nest/1/0/x", "/spec/ports/1/port/x", "/metadata/annotations/~2"]:
    remove(doc, [p])
remove(doc, ["/spec/ports/0", "/spec/ports/0"])
remove(doc, ["/spec/ports/2", "/spec/ports/x"])

for s, l in [("app=web", {"app": "web"}), ("app==web,tier=front", {"app": "web", "tier": "back"}), ("app!=db", {}),
             ("app in (web, db)", {"app": "db"}), ("app notin (web)", {"app": "web"}), ("app", {"app": ""}), ("!app", {}),
             ("n>4,n<6", {"n": "5"}), ("n>4", {"n": "x"}), ("", {}), ("  ", {"a": "b"}), ("e=", {"e": ""}), ("e==", {"e": ""}),
             ("e in ()", {"e": ""}), ("x in (,a)", {"x": ""}), ("x in (a,)", {"x": ""}), ("x in (a,,b)", {"x": ""}),
             ("kind=in", {"kind": "in"}), ("in=x", {"in": "x"}), ("app=web,", {}), ("=web", {}), ("app in web", {}),
             ("app in (web", {}), ("app >", {}), ("app>x", {}), ("a/b/c=d", {}), ("-app=x", {}), ("app=-x", {}),
             ("app=web extra", {}), ("!app=web", {}), ("app=(x)", {}), ("app=" + "v" * 64, {}), ("app=" + "v" * 63, {"app": "v" * 63}),
             ("helm.toolkit.fluxcd.io/name=web", {"helm.toolkit.fluxcd.io/name": "web"}), ("Example.com/a=b", {}),
             ("example.com/A_b.c=d", {"example.com/A_b.c": "d"}), ("a , b", {"a": "1", "b": "2"}), ("a,,b", {}), (",a", {}),
             ("a<=1", {}), ("a!", {}), ("a=b=c", {}), ("a notin ()", {"a": "x"}), ("!a,b", {"b": "1"}), ("a in (x) ,!b", {"a": "x"}),
             ("a==b,c!=d,e", {"a": "b", "c": "x", "e": "1"}), ("a=b\tc=d", {}), ("a = b", {"a": "b"}), ("a in(x)", {"a": "x"})]:
    sel(s, l)

for c in cases:
    print(json.dumps(c, ensure_ascii=False))
