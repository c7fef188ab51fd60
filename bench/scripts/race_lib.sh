# Shared by the server races (race.sh: HTTP/1.1 and HTTPS with wrk; h2race.sh:
# HTTP/2 with h2load). Sourced, not run. The caller sets, before using what
# needs them:
#
#   RACE_TAG      the prefix of its messages ("race", "h2race")
#   RACE WWW BIN  bench/race, its www/ and the built binaries (race-NAME)
#   PORT ADDR     where the server listens (127.0.0.1:PORT)
#   SCHEME CURL   http or https, and the curl command (an array) that checks
#                 the answers and probes the port
#   NICE SERVER_CORE CLIENT_CORE
#   WORK RAW      a scratch directory, and where raw outputs go
#   NGINX_LISTEN  parameters after nginx's `listen ADDR` ("", " ssl", " http2")
#   RACE_TLS_CERT RACE_TLS_KEY   (optional) the certificate nginx serves
#
# and has SERVER_PID "" at first (start_server sets it, stop_server clears it).

say() { echo "$RACE_TAG: $*" >&2; }
die() { say "$*"; exit 1; }

# Installs from Debian the package of each COMMAND:PACKAGE whose command is
# missing (looked for on PATH and in /usr/sbin, where nginx is).
install_missing() {
    local need=() pair
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null || [ -x "/usr/sbin/${pair%%:*}" ] || need+=("${pair#*:}")
    done
    [ ${#need[@]} -gt 0 ] || return 0
    say "installing ${need[*]} from Debian"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
}

# A higher priority needs root; without it the race runs at the usual one.
check_nice() {
    nice -n "$NICE" true 2>/dev/null && [ "$(nice -n "$NICE" nice)" = "$NICE" ] || NICE=0
}

# `nice` and `taskset` exec what they run: a command started with `&` keeps
# `$!` when they are written out, not behind a function (`f &` forks a subshell).
on_client() { nice -n "$NICE" taskset -c "$CLIENT_CORE" "$@"; }

# --- servers -----------------------------------------------------------------
# nginx from bench/race/nginx/nginx.conf.in (nginx-nosendfile: the same with
# `sendfile off`), or `race-NAME` from BIN.
start_server() {
    local name=$1 sendfile=on
    case $name in
        nginx | nginx-nosendfile)
            [ "$name" = nginx ] || sendfile=off
            local run=$WORK/nginx
            mkdir -p "$run"
            : >"$run/tls.conf"
            if [ -n "${RACE_TLS_CERT:-}" ]; then
                printf 'ssl_certificate %s;\nssl_certificate_key %s;\n' \
                    "$RACE_TLS_CERT" "$RACE_TLS_KEY" >"$run/tls.conf"
            fi
            sed -e "s|@RUN@|$run|g" -e "s|@WWW@|$WWW|g" -e "s|@PORT@|$PORT|g" \
                -e "s|@LISTEN@|$NGINX_LISTEN|g" -e "s|^\( *sendfile\) on;|\1 $sendfile;|" \
                "$RACE/nginx/nginx.conf.in" >"$run/nginx.conf"
            nice -n "$NICE" taskset -c "$SERVER_CORE" "$NGINX" -p "$run" -c "$run/nginx.conf" \
                2>"$WORK/server.log" &
            ;;
        *)
            [ -x "$BIN/race-$name" ] || die "unknown server $name (no $BIN/race-$name)"
            nice -n "$NICE" taskset -c "$SERVER_CORE" "$BIN/race-$name" "$ADDR" "$WWW" \
                2>"$WORK/server.log" &
            ;;
    esac
    SERVER_PID=$!
    for _ in $(seq 100); do
        if "${CURL[@]}" -o /dev/null "$SCHEME://$ADDR/plaintext"; then
            return 0
        fi
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$WORK/server.log" >&2
    die "$name did not come up on $ADDR"
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    # The port must be free before the next server binds it.
    for _ in $(seq 50); do
        "${CURL[@]}" -o /dev/null "$SCHEME://$ADDR/" || return 0
        sleep 0.1
    done
    die "the port $PORT is still served after stopping"
}

# The server's processes: itself and its children (nginx's worker).
server_pids() {
    echo "$SERVER_PID"
    pgrep -P "$SERVER_PID" || true
}

# utime + stime of every thread of the server's processes, in clock ticks.
cpu_ticks() {
    local total=0 pid t
    for pid in $(server_pids); do
        # Fields after the command name: state is $1, utime $12, stime $13.
        t=$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')
        total=$((total + t))
    done
    echo "$total"
}

# The process holding the connections: nginx's worker, else the server.
conn_pid() {
    local child
    child=$(pgrep -P "$SERVER_PID" | head -n1 || true)
    echo "${child:-$SERVER_PID}"
}

# Nanoseconds on a CPU and waiting for one, summed over the server's threads.
sched_ns() {
    local pid
    for pid in $(server_pids); do
        cat /proc/"$pid"/task/*/schedstat 2>/dev/null || true
    # %.0f: mawk's %d stops at 2^31 - 1, about 2 s of nanoseconds.
    done | awk '{run += $1; wait += $2} END {printf "%.0f %.0f\n", run, wait}'
}

vmrss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# Each answer checked once per server: status, body and headers kept.
check_answers() {
    local name=$1 path body
    for path in plaintext index.html; do
        "${CURL[@]}" -D "$RAW/$name-$path.headers.txt" -o "$WORK/body" "$SCHEME://$ADDR/$path" \
            || die "$name: GET /$path failed"
        head -n1 "$RAW/$name-$path.headers.txt" | grep -q ' 200' \
            || die "$name: GET /$path: $(head -n1 "$RAW/$name-$path.headers.txt")"
        if [ "$path" = plaintext ]; then
            body=$(cat "$WORK/body")
            [ "$body" = "Hello, World!" ] || die "$name: /plaintext answered '$body'"
        else
            cmp -s "$WORK/body" "$WWW/index.html" || die "$name: /index.html differs from the file"
        fi
    done
}
