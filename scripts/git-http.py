#!/usr/bin/env python3
"""A Git server over HTTP for the local control plane: Git's own smart-HTTP backend (`git http-backend`,
run as a CGI program with an argument vector) behind a loopback HTTP server, so source-controller can
clone the repositories under ROOT as http://127.0.0.1:PORT/NAME.git.

    scripts/git-http.py PORT ROOT        (started and stopped by scripts/cluster.sh)
"""

import http.server
import os
import subprocess
import sys
import urllib.parse


class GitHandler(http.server.BaseHTTPRequestHandler):
    root = "."

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    def _backend(self):
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": urllib.parse.unquote(url.path),
            "QUERY_STRING": url.query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "GIT_HTTP_MAX_REQUEST_BUFFER": "100M",
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = done.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _backend
    do_POST = _backend


def main():
    port, root = int(sys.argv[1]), os.path.abspath(sys.argv[2])
    GitHandler.root = root
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), GitHandler)
    server.serve_forever()


if __name__ == "__main__":
    main()
