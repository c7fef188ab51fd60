#!/usr/bin/env bash
# A single-node Apache Kafka (KRaft, broker and controller in one JVM) on 127.0.0.1, built from
# Maven Central artifacts alone, for the integration tests and benchmarks.
#
#   broker.sh install   gather kafka_2.13 + kafka-tools and their dependencies into the cache
#   broker.sh start     install if needed, format fresh storage, start, wait for ApiVersions
#   broker.sh restart   stop it cleanly, start it again on the same storage and ports
#   broker.sh stop      kill the started broker (and an added one) by its recorded pid
#   broker.sh add-broker
#                       start a second node, broker only, in the running cluster (for tests
#                       that need partitions led by two brokers); prints its address
#   broker.sh status    print the bootstrap address, or fail when no broker runs
#   broker.sh tls       print the TLS listener's address and the PEM file of the CA that
#                       signed its certificate (self-signed, made at start, for 127.0.0.1
#                       and localhost), or fail when no broker runs
#   broker.sh sasl      print the SASL listener's address (SASL_PLAINTEXT: PLAIN,
#                       SCRAM-SHA-256, SCRAM-SHA-512, and OAUTHBEARER with unsecured tokens,
#                       as the SASL_SSL listener),
#                       a user and its password, or fail when no broker runs
#   broker.sh sasl-ssl  the same for the SASL_SSL listener (SASL over TLS, as managed Kafka
#                       services run it), then the CA's PEM file as `tls` prints it
#   broker.sh reauth    print the address of a SASL listener (PLAIN) whose sessions last 2 s
#                       (connections.max.reauth.ms, as managed services set it: a client that
#                       does not authenticate again has its connection closed), a user and its
#                       password
#   broker.sh mtls      print the mutual-TLS listener's address (TLS that requires a client
#                       certificate), the broker's CA file as `tls` prints it, and a client
#                       certificate and its key that the listener accepts (PEM files)
#   broker.sh java FILE.java ARGS...
#                       run a single-file Java program with Kafka's own client on the class
#                       path (the tests' transactional producer, Transactions.java)
#
# Environment:
#   KAFKA_VERSION     4.1.0 (default) or a 3.9.x release, the second version for negotiation
#   RINGWIRE_CACHE    artifact cache, default ~/.cache/ringwire (lib/ lands in kafka-$VERSION/)
#   KAFKA_RUN_DIR     pid, bootstrap, logs and data, default $RINGWIRE_CACHE/run/kafka-$VERSION
#   KAFKA_HEAP        JVM heap, default 192m (idles near 150 MB)
#
# `start` prints the bootstrap address (HOST:PORT) on stdout and writes it to $KAFKA_RUN_DIR/bootstrap.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
version="${KAFKA_VERSION:-4.1.0}"
cache="${RINGWIRE_CACHE:-$HOME/.cache/ringwire}"
home="$cache/kafka-$version"
run="${KAFKA_RUN_DIR:-$cache/run/kafka-$version}"
heap="${KAFKA_HEAP:-192m}"
# The SASL listener's one user (a test broker's, not a secret).
SASL_USER=ringwire
SASL_PASSWORD=ringwire-secret

java=(java "-Xms$heap" "-Xmx$heap" -XX:+UseSerialGC -Djava.awt.headless=true
    "-Dlog4j2.rootLogger.level=WARN" -cp "$home/lib/*")

log() { printf 'broker.sh: %s\n' "$*" >&2; }

install() {
    if [[ -f "$home/.complete" ]]; then
        return
    fi
    log "gathering Apache Kafka $version from Maven Central into $home/lib"
    mkdir -p "$home"
    mvn -q -B -f "$here/pom.xml" -Dkafka.version="$version" \
        dependency:copy-dependencies -DoutputDirectory="$home/lib" >&2
    touch "$home/.complete"
}

# $1 distinct free TCP ports on 127.0.0.1, chosen by the kernel (all bound to port 0 at once,
# so no two are the same), on one line.
free_ports() {
    python3 -c 'import socket, sys
held = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in held:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in held))' "$1"
}

# Kafka cluster ids are 16 random bytes in URL-safe base64 without padding. One that starts with
# '-' reads as an option to the format tool's argument parser (1 run in 64 failed so); Kafka's
# own Uuid.randomUuid redraws those too.
cluster_id() {
    local id
    while id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"; [[ "$id" == -* ]]; do :; done
    echo "$id"
}

# True when the pid file of node directory $1 (default: the first node's) names a live process.
running() {
    local dir="${1:-$run}"
    [[ -f "$dir/pid" ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null
}

# True once the broker answers an ApiVersions v0 request (correlation id 1) on $1: an open port
# alone is not readiness.
answers() {
    local port="$1" reply
    reply="$(timeout 2 python3 - "$port" <<'EOF' 2>/dev/null
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
s.sendall(struct.pack(">ihhih", 10, 18, 0, 1, -1))
head = s.recv(8)
print("ok" if len(head) == 8 and struct.unpack(">ii", head)[1] == 1 else "no")
EOF
)" || return 1
    [[ "$reply" == ok ]]
}

start() {
    if running; then
        cat "$run/bootstrap"
        return
    fi
    install
    rm -rf "$run"
    mkdir -p "$run/data"
    local port controller ssl sasl sasl_ssl mtls reauth id
    read -r port controller ssl sasl sasl_ssl mtls reauth <<<"$(free_ports 7)"
    id="$(cluster_id)"
    certificate "$run/tls"
    cat >"$run/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,SSL://127.0.0.1:$ssl,SASL_PLAINTEXT://127.0.0.1:$sasl,SASL_SSL://127.0.0.1:$sasl_ssl,MTLS://127.0.0.1:$mtls,REAUTH://127.0.0.1:$reauth,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SSL://127.0.0.1:$ssl,SASL_PLAINTEXT://127.0.0.1:$sasl,SASL_SSL://127.0.0.1:$sasl_ssl,MTLS://127.0.0.1:$mtls,REAUTH://127.0.0.1:$reauth
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL,REAUTH:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PASSWORD";
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
# The REAUTH listener: PLAIN, sessions of 2 s.
listener.name.reauth.sasl.enabled.mechanisms=PLAIN
listener.name.reauth.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PASSWORD";
listener.name.reauth.connections.max.reauth.ms=2000
# OAUTHBEARER with Kafka's unsecured tokens (JWTs with "alg": "none", for development): the
# broker checks their claims (a subject, an expiry in the future), not a signature.
listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PASSWORD";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";
# The TLS listener's key and certificate chain in one PEM file (Kafka 2.7+).
ssl.keystore.type=PEM
ssl.keystore.location=$run/tls/broker.pem
# The mutual-TLS listener: the same certificate, and clients must present one the client CA
# signed.
listener.name.mtls.ssl.client.auth=required
listener.name.mtls.ssl.truststore.type=PEM
listener.name.mtls.ssl.truststore.location=$run/tls/client-ca.pem
inter.broker.listener.name=PLAINTEXT
log.dirs=$run/data
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
# One partition instead of 50: the first transaction's coordinator is ready in a moment.
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
# Sessions as short as a second: the group tests wait for sessions to run out.
group.min.session.timeout.ms=1000
# The consumer protocol's groups (KIP-848): beats every half second and sessions of six, so
# that its tests see partitions move without waiting out the defaults (5 s and 45 s).
group.consumer.min.heartbeat.interval.ms=500
group.consumer.heartbeat.interval.ms=500
group.consumer.min.session.timeout.ms=3000
group.consumer.session.timeout.ms=6000
# Topics created after a member subscribed by pattern are found within 10 s (the least
# allowed), not 10 minutes.
group.consumer.regex.refresh.interval.ms=10000
auto.create.topics.enable=false
# The default 128 MiB dedupe buffer does not fit a small heap: the broker dies at start.
log.cleaner.dedupe.buffer.size=4194304
# Room for the 10 MB batch test.
message.max.bytes=16777216
replica.fetch.max.bytes=16777216
socket.request.max.bytes=104857600
EOF
    echo "$port" >"$run/port"
    echo "127.0.0.1:$ssl" >"$run/bootstrap-tls"
    echo "127.0.0.1:$sasl" >"$run/bootstrap-sasl"
    echo "127.0.0.1:$sasl_ssl" >"$run/bootstrap-sasl-ssl"
    echo "127.0.0.1:$mtls" >"$run/bootstrap-mtls"
    echo "127.0.0.1:$reauth" >"$run/bootstrap-reauth"
    echo "$id" >"$run/cluster_id"
    # The SCRAM credentials live in the cluster's metadata, written at format time.
    format "$run" \
        --add-scram "SCRAM-SHA-256=[name=$SASL_USER,password=$SASL_PASSWORD]" \
        --add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$SASL_PASSWORD]"
    launch "$run"
}

# A self-signed certificate for 127.0.0.1 and localhost in directory $1: ca.pem (what
# clients trust) and broker.pem (the key, PKCS#8 as Kafka reads it, then the certificate);
# and for mutual TLS a client CA (client-ca.pem, what the broker trusts) and a client
# certificate it signed (client.pem, client-key.pem).
certificate() {
    mkdir -p "$1"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=localhost" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$1/key.pem" -out "$1/ca.pem" 2>/dev/null
    cat "$1/key.pem" "$1/ca.pem" >"$1/broker.pem"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=ringwire client CA" \
        -keyout "$1/client-ca-key.pem" -out "$1/client-ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=ringwire-client" \
        -keyout "$1/client-key.pem" -out "$1/client.csr" 2>/dev/null
    openssl x509 -req -in "$1/client.csr" -CA "$1/client-ca.pem" -CAkey "$1/client-ca-key.pem" \
        -CAcreateserial -days 30 -extfile <(printf 'extendedKeyUsage=clientAuth\n') \
        -out "$1/client.pem" 2>/dev/null
}

# Formats the storage of node directory $1 for the cluster in $run, with the format tool's
# further arguments after it.
format() {
    local dir="$1"
    shift
    "${java[@]}" kafka.tools.StorageTool format -t "$(cat "$run/cluster_id")" \
        -c "$dir/server.properties" "$@" >"$dir/format.log" 2>&1 ||
        { cat "$dir/format.log" >&2; exit 1; }
}

# Starts the JVM of node directory $1 on its formatted storage and waits until it answers
# ApiVersions.
launch() {
    local dir="$1" port
    port="$(cat "$dir/port")"
    nohup "${java[@]}" kafka.Kafka "$dir/server.properties" >>"$dir/server.log" 2>&1 &
    echo $! >"$dir/pid"
    local deadline=$((SECONDS + 60))
    until answers "$port"; do
        if ! running "$dir"; then
            tail -n 30 "$dir/server.log" >&2
            log "Kafka $version exited during start"
            exit 1
        fi
        if ((SECONDS > deadline)); then
            stop
            log "Kafka $version did not answer ApiVersions within 60 s"
            exit 1
        fi
        sleep 0.2
    done
    echo "127.0.0.1:$port" >"$dir/bootstrap"
    log "Kafka $version ready at 127.0.0.1:$port (pid $(cat "$dir/pid"))"
    cat "$dir/bootstrap"
}

# A second node (node.id 2, broker only) in the running cluster, with the first node's
# settings, its own port and storage, the first node's controller as its quorum.
add_broker() {
    local dir="$run/node2" port
    if ! running; then
        log "no Kafka $version broker running in $run"
        exit 1
    fi
    if running "$dir"; then
        cat "$dir/bootstrap"
        return
    fi
    rm -rf "$dir"
    mkdir -p "$dir/data"
    port="$(free_ports 1)"
    sed -e 's/^process.roles=.*/process.roles=broker/' -e 's/^node.id=.*/node.id=2/' \
        -e "s|^listeners=.*|listeners=PLAINTEXT://127.0.0.1:$port|" \
        -e "s|^advertised.listeners=.*|advertised.listeners=PLAINTEXT://127.0.0.1:$port|" \
        -e "s|^log.dirs=.*|log.dirs=$dir/data|" "$run/server.properties" >"$dir/server.properties"
    echo "$port" >"$dir/port"
    format "$dir"
    launch "$dir"
}

# Stops the broker cleanly and starts it again on the same storage and ports.
restart() {
    if ! running; then
        log "no Kafka $version broker running in $run"
        exit 1
    fi
    stop_node "$run"
    launch "$run"
}

stop() {
    stop_node "$run/node2"
    stop_node "$run"
}

# Stops the node of directory $1, if it runs.
stop_node() {
    local dir="$1" pid
    if ! [[ -f "$dir/pid" ]]; then
        return
    fi
    pid="$(cat "$dir/pid")"
    if kill "$pid" 2>/dev/null; then
        # A clean shutdown takes a few seconds; past 20 s it is killed outright.
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/pid" "$dir/bootstrap"
}

status() {
    if running; then
        cat "$run/bootstrap"
    else
        log "no Kafka $version broker running"
        return 1
    fi
}

sasl() {
    if running; then
        echo "$(cat "$run/bootstrap-sasl") $SASL_USER $SASL_PASSWORD"
    else
        log "no Kafka $version broker running"
        return 1
    fi
}

sasl_ssl() {
    if running; then
        echo "$(cat "$run/bootstrap-sasl-ssl") $SASL_USER $SASL_PASSWORD $run/tls/ca.pem"
    else
        log "no Kafka $version broker running"
        return 1
    fi
}

reauth() {
    if running; then
        echo "$(cat "$run/bootstrap-reauth") $SASL_USER $SASL_PASSWORD"
    else
        log "no Kafka $version broker running"
        return 1
    fi
}

mtls() {
    if running; then
        echo "$(cat "$run/bootstrap-mtls") $run/tls/ca.pem $run/tls/client.pem $run/tls/client-key.pem"
    else
        log "no Kafka $version broker running"
        return 1
    fi
}

tls() {
    if running; then
        echo "$(cat "$run/bootstrap-tls") $run/tls/ca.pem"
    else
        log "no Kafka $version broker running"
        return 1
    fi
}

case "${1:-}" in
install) install ;;
start) start ;;
restart) restart ;;
stop) stop ;;
add-broker) add_broker ;;
status) status ;;
tls) tls ;;
sasl) sasl ;;
sasl-ssl) sasl_ssl ;;
mtls) mtls ;;
reauth) reauth ;;
java)
    shift
    install
    exec "${java[@]}" "$@"
    ;;
*)
    echo "usage: $0 {install|start|restart|stop|add-broker|status|tls|sasl|sasl-ssl|mtls|reauth|java FILE ARGS...}" >&2
    exit 2
    ;;
esac
