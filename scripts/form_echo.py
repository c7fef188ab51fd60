# A test peer: an HTTP server on a free loopback port (printed first) that parses each
# POSTed multipart/form-data body with Python's email package and answers one line per part:
# name|filename|content type|data as hex (filename and type "-" when absent); to /crc, the
# data's length and CRC-32 in place of its hex.
import email.parser, email.policy, http.server, zlib

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        head = ("Content-Type: %s\r\n\r\n" % self.headers.get("Content-Type", "")).encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        lines = []
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            filename = part.get_filename() or "-"
            ctype = part.get("Content-Type") and part.get_content_type() or "-"
            data = part.get_payload(decode=True)
            if self.path == "/crc":
                data = "%d|%08x" % (len(data), zlib.crc32(data))
            else:
                data = data.hex()
            lines.append("%s|%s|%s|%s\n" % (name, filename, ctype, data))
        out = "".join(lines).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
