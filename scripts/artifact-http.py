#!/usr/bin/env python3
"""The artifact server of the local control plane: serves the files under ROOT read-only (GET and HEAD)
on 127.0.0.1:PORT, the chart archives of ExternalArtifacts and the Helm repositories. Every path under
/private/ asks for HTTP Basic auth with the one user:password line of AUTH_FILE (a Helm repository that a
HelmRepository reaches through its secretRef); the rest is public. The credentials are never printed or
logged: the access log has the request line and status only. SIGTERM stops it cleanly.

With --tls-port and --tls-dir, the same files are served over HTTPS on 127.0.0.1:TLS_PORT too, with the
serving certificate apiserver.crt/.key of TLS_DIR, to clients that present a certificate its ca.crt
signed (a Helm repository that a HelmRepository reaches through its certSecretRef).

    scripts/artifact-http.py PORT ROOT --auth AUTH_FILE [--tls-port TLS_PORT --tls-dir TLS_DIR]
                                                        (started and stopped by scripts/cluster.sh)
"""

import argparse
import base64
import binascii
import hmac
import html
import http.server
import os
import posixpath
import signal
import ssl
import sys
import threading
import urllib.parse

REALM = "cozyhr-e2e"
PRIVATE = "private"
TYPES = {
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".tgz": "application/gzip",
    ".gz": "application/gzip",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}


def under(path, top):
    """Whether `path` is `top` or inside it (both absolute and normalized)."""
    top = top.rstrip("/")
    return path == (top or "/") or path.startswith(top + "/")


class ArtifactHandler(http.server.BaseHTTPRequestHandler):
    root = "."
    credentials = b""

    def version_string(self):
        return "cozyhr-artifacts"

    def log_message(self, fmt, *args):
        # The request line and status only: never a header (Authorization).
        sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    def _authorized(self):
        given = self.headers.get("Authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(token.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        return hmac.compare_digest(decoded, self.credentials)

    def _reply(self, status, body, ctype="text/plain; charset=utf-8", headers=()):
        data = body.encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _serve(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if not path.startswith("/") or "\0" in path:
            return self._reply(400, "bad path\n")
        # Resolved (dot segments, repeated slashes, symbolic links) before it is judged, so that no
        # spelling of a path reaches /private/ without credentials or leaves ROOT.
        full = os.path.realpath(os.path.join(self.root, path.lstrip("/")))
        lexical = posixpath.normpath("/" + path.lstrip("/"))
        if under(lexical, "/" + PRIVATE) or under(full, os.path.join(self.root, PRIVATE)):
            # Asked before existence is: nothing under /private/ is told apart without credentials.
            if not self._authorized():
                return self._reply(401, "authentication required\n",
                                   headers=[("WWW-Authenticate", 'Basic realm="%s"' % REALM)])
        if not under(full, self.root):
            return self._reply(404, "not found\n")
        if os.path.isdir(full):
            if not path.endswith("/"):
                return self._reply(301, "moved\n", headers=[("Location", urllib.parse.quote(path) + "/")])
            index = os.path.join(full, "index.html")
            if not os.path.isfile(index):
                return self._listing(path, full)
            full = index
        try:
            f = open(full, "rb")
        except OSError:
            return self._reply(404, "not found\n")
        with f:
            size = os.fstat(f.fileno()).st_size
            self.send_response(200)
            ext = os.path.splitext(full)[1].lower()
            self.send_header("Content-Type", TYPES.get(ext, "application/octet-stream"))
            self.send_header("Content-Length", str(size))
            self.end_headers()
            if self.command != "HEAD":
                while True:
                    chunk = f.read(1 << 16)
                    if not chunk:
                        break
                    self.wfile.write(chunk)

    def _listing(self, path, full):
        try:
            names = sorted(os.listdir(full))
        except OSError:
            return self._reply(404, "not found\n")
        items = []
        for name in names:
            shown = name + ("/" if os.path.isdir(os.path.join(full, name)) else "")
            items.append('<li><a href="%s">%s</a></li>' % (urllib.parse.quote(shown), html.escape(shown)))
        title = html.escape(path)
        body = "<!DOCTYPE html>\n<html><head><title>%s</title></head><body><h1>%s</h1><ul>\n%s\n</ul></body></html>\n" % (
            title, title, "\n".join(items))
        self._reply(200, body, "text/html; charset=utf-8")

    do_GET = _serve
    do_HEAD = _serve


def read_credentials(path):
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    if len(lines) != 1 or b":" not in lines[0] or lines[0].startswith(b":"):
        # The file's content is not shown: it holds a password.
        sys.exit("artifact-http.py: %s: expected one line user:password" % path)
    return lines[0]


def main():
    p = argparse.ArgumentParser(description="the local control plane's artifact server")
    p.add_argument("port", type=int)
    p.add_argument("root")
    p.add_argument("--auth", required=True, metavar="FILE", help="user:password for paths under /private/")
    p.add_argument("--tls-port", type=int, help="serve over HTTPS here too, to clients with a certificate")
    p.add_argument("--tls-dir", metavar="DIR", help="ca.crt, apiserver.crt and apiserver.key for --tls-port")
    a = p.parse_args()
    if (a.tls_port is None) != (a.tls_dir is None):
        p.error("--tls-port and --tls-dir go together")
    ArtifactHandler.root = os.path.realpath(a.root)
    ArtifactHandler.credentials = read_credentials(a.auth)
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", a.port), ArtifactHandler)]
    if a.tls_port is not None:
        tls = http.server.ThreadingHTTPServer(("127.0.0.1", a.tls_port), ArtifactHandler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(a.tls_dir, "apiserver.crt"), os.path.join(a.tls_dir, "apiserver.key"))
        context.load_verify_locations(os.path.join(a.tls_dir, "ca.crt"))
        context.verify_mode = ssl.CERT_REQUIRED
        tls.socket = context.wrap_socket(tls.socket, server_side=True)
        servers.append(tls)
    # shutdown() waits for serve_forever() to return: from a thread, not the handler on the serving one.
    def stop(*_):
        for server in servers:
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.1}) for s in servers]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for server in servers:
            server.server_close()


if __name__ == "__main__":
    main()
