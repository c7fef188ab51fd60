# Python 2.7 entry point for wstest, installed next to the launcher by scripts/autobahn/install.sh.
#
# wstest (and autobahn's listenWS) listen on every interface (interface=''); this wrapper makes Twisted's
# listenTCP/listenSSL default to $WSTEST_BIND (127.0.0.1 unless set) so nothing leaves loopback.
# Then it runs autobahntestsuite.wstest.run() exactly as the `wstest` console script would.
import os
import sys
import warnings

warnings.filterwarnings("ignore", message="Python 2 is no longer supported")

BIND = os.environ.get("WSTEST_BIND", "127.0.0.1")

from twisted.internet import posixbase  # noqa: E402

_listenTCP = posixbase.PosixReactorBase.listenTCP
_listenSSL = posixbase.PosixReactorBase.listenSSL


def listenTCP(self, port, factory, backlog=50, interface=""):
    return _listenTCP(self, port, factory, backlog, interface or BIND)


def listenSSL(self, port, factory, contextFactory, backlog=50, interface=""):
    return _listenSSL(self, port, factory, contextFactory, backlog, interface or BIND)


posixbase.PosixReactorBase.listenTCP = listenTCP
posixbase.PosixReactorBase.listenSSL = listenSSL

from autobahntestsuite import wstest  # noqa: E402

if __name__ == "__main__":
    sys.argv[0] = "wstest"
    wstest.run()
