//! What ringwire's test suites share (a dev-dependency only): the third-party peers they
//! install on demand, so that the README's test command passes on a fresh machine, and the
//! ones they start.

use std::io::{BufRead as _, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Installs Python's `package` with pip when `module` does not import; fails the test when
/// it still does not.
///
/// # Panics
///
/// When the module cannot be had.
pub fn ensure_python_module(module: &str, package: &str) {
    let has = || {
        Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has() {
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", package])
            .status();
    }
    assert!(
        has(),
        "Python's {package} is missing: python3 -m pip install {package}"
    );
}

/// Runs `python3 -c script args...`, a server that prints the port it listens on first:
/// the child (to kill when done) and the port.
///
/// # Panics
///
/// When python3 does not run or prints no port.
pub fn python_listening(script: &str, args: &[&str]) -> (Child, u16) {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is installed");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("port");
    (child, line.trim().parse().expect("a port"))
}

/// `prefix` and the time in nanoseconds: a name (a Kafka topic, a group) no earlier run used,
/// for peers that outlive a test run.
#[must_use]
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}-{nanos}")
}

/// nginx (Debian's `/usr/sbin/nginx`) in the foreground, in one process, with its files under
/// a directory of the test's; killed when dropped.
#[derive(Debug)]
pub struct Nginx {
    child: Child,
}

impl Nginx {
    /// Starts nginx with `http` inside its `http {}` block (after the settings that keep
    /// its files under `dir`) and waits until it takes connections on `port`. `pin` runs
    /// it through `taskset -c CPUS`.
    ///
    /// # Panics
    ///
    /// When nginx is missing, or does not listen on `port` within 10 s.
    #[must_use]
    pub fn start(dir: &Path, http: &str, port: u16, pin: Option<&str>) -> Nginx {
        let d = dir.display();
        let config = format!(
            "daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
{http}
}}
"
        );
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, config).expect("nginx.conf written");
        let mut command = match pin {
            Some(cpus) => {
                // taskset execs nginx: the child's pid is nginx's.
                let mut command = Command::new("taskset");
                command.args(["-c", cpus, NGINX]);
                command
            }
            None => Command::new(NGINX),
        };
        let child = command
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(dir)
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx is installed at /usr/sbin/nginx");
        let nginx = Nginx { child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nginx did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        nginx
    }

    /// Ends nginx now (dropping does it too).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// nginx's process id.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.stop();
    }
}

const NGINX: &str = "/usr/sbin/nginx";
