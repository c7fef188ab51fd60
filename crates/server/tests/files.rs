//! Static files and embedded pages over loopback, fetched by curl.

mod common;

use std::ffi::OsStr;
use std::fs;
use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::time::Duration;

use common::{curl_text, raw, start, statuses};
use ringwire_server::files::{Dotfiles, EmbeddedSite, StaticFiles};
use ringwire_server::ServerConfig;

/// A root with a file, a directory with an index, one without, symlinks to
/// a file outside the root, a file name that is not UTF-8, and FIFOs (one
/// as a directory's index).
fn site() -> (tempfile::TempDir, SocketAddr) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    fs::create_dir_all(root.join("site")).expect("mkdir");
    fs::create_dir_all(root.join("list/sub")).expect("mkdir");
    fs::write(root.join("a.txt"), "alpha\n").expect("write");
    fs::write(root.join("style.css"), "body{}\n").expect("write");
    fs::write(root.join("site/index.html"), "<p>index</p>\n").expect("write");
    fs::write(root.join("list/<b>&.txt"), "x").expect("write");
    fs::write(root.join("list/plain.json"), "{}").expect("write");
    fs::write(dir.path().join("secret.txt"), "secret\n").expect("write");
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("out")).expect("symlink");
    std::os::unix::fs::symlink(dir.path(), root.join("outdir")).expect("symlink");
    fs::create_dir_all(root.join("leak")).expect("mkdir");
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("leak/index.html"))
        .expect("symlink");
    // Names that need escaping, and ones that are not UTF-8 (which Linux allows).
    let odd = root.join("a b&<i>");
    fs::create_dir_all(&odd).expect("mkdir");
    fs::write(odd.join(OsStr::from_bytes(b"bad\xffname.txt")), "latin\n").expect("write");
    std::os::unix::fs::symlink(
        dir.path().join("secret.txt"),
        root.join(OsStr::from_bytes(b"out\xff")),
    )
    .expect("symlink");
    fs::create_dir_all(root.join("fifo")).expect("mkdir");
    for fifo in ["pipe", "fifo/index.html"] {
        let made = std::process::Command::new("mkfifo")
            .arg(root.join(fifo))
            .status();
        assert!(made.expect("mkfifo").success());
    }
    let files = StaticFiles::new(root).expect("root");
    let addr = start(ServerConfig::default(), files);
    (dir, addr)
}

fn get(addr: SocketAddr, path: &str) -> String {
    curl_text(&["-i", "--path-as-is", &format!("http://{addr}{path}")])
}

fn status(response: &str) -> u16 {
    statuses(response).first().copied().unwrap_or(0)
}

#[test]
fn get_and_head_a_file() {
    let (_dir, addr) = site();
    let out = get(addr, "/a.txt");
    assert_eq!(status(&out), 200, "{out}");
    assert!(
        out.contains("content-type: text/plain; charset=utf-8\r\n"),
        "{out}"
    );
    assert!(out.contains("content-length: 6\r\n"), "{out}");
    assert!(out.ends_with("\r\n\r\nalpha\n"), "{out}");
    let css = get(addr, "/style.css");
    assert!(css.contains("content-type: text/css"), "{css}");
    let head = curl_text(&["-I", &format!("http://{addr}/a.txt")]);
    assert_eq!(status(&head), 200, "{head}");
    assert!(head.contains("content-length: 6\r\n"), "{head}");
    assert!(head.ends_with("\r\n\r\n"), "no body after HEAD: {head}");
}

/// A file has one URL: as nginx and Apache do (open(2) says ENOTDIR), a
/// path that names it as a directory is not found, also once the file is cached.
#[test]
fn a_file_is_not_a_directory() {
    let (_dir, addr) = site();
    assert_eq!(status(&get(addr, "/a.txt")), 200);
    for path in [
        "/a.txt/",
        "/a.txt/.",
        "/a.txt/%2e",
        "/a.txt//",
        "/site/index.html/",
    ] {
        let out = get(addr, path);
        assert_eq!(status(&out), 404, "{path}: {out}");
        assert!(!out.contains("alpha"), "{path}: {out}");
    }
    // Empty segments within the path still collapse, as in nginx.
    assert!(get(addr, "//a.txt").ends_with("\r\n\r\nalpha\n"));
    assert!(get(addr, "/site//index.html").ends_with("<p>index</p>\n"));
}

#[test]
fn directories_serve_their_index_or_a_listing() {
    let (_dir, addr) = site();
    let out = get(addr, "/site/");
    assert!(out.contains("content-type: text/html"), "{out}");
    assert!(out.ends_with("<p>index</p>\n"), "{out}");
    let redirect = get(addr, "/site");
    assert_eq!(status(&redirect), 301, "{redirect}");
    assert!(redirect.contains("location: /site/\r\n"), "{redirect}");
    // Never a protocol-relative location (`//site/` would leave the host).
    let doubled = get(addr, "//site");
    assert!(doubled.contains("location: /site/\r\n"), "{doubled}");
    // The query goes along, as nginx keeps it.
    for (path, location) in [("/site?x=1&y", "/site/?x=1&y"), ("//site?", "/site/?")] {
        let out = get(addr, path);
        let field = format!("location: {location}\r\n");
        assert!(out.contains(&field), "{path}: {out}");
    }
    let listing = get(addr, "/list/");
    assert_eq!(status(&listing), 200, "{listing}");
    assert!(listing.contains("&lt;b&gt;&amp;.txt</a>"), "{listing}");
    assert!(listing.contains("href=\"%3Cb%3E%26.txt\""), "{listing}");
    assert!(listing.contains(">plain.json</a>"), "{listing}");
    assert!(listing.contains(">sub/</a>"), "{listing}");
    assert!(!listing.contains("<b>"), "{listing}");
}

#[test]
fn missing_escaping_and_wrong_methods_are_refused() {
    let (_dir, addr) = site();
    assert_eq!(status(&get(addr, "/missing.txt")), 404);
    for path in [
        "/../secret.txt",
        "/../../../../etc/passwd",
        "/%2e%2e/secret.txt",
        "/%2E%2E/%2e%2e/etc/passwd",
        "/a%2f..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
        "/a%00.txt",
        "/out",
        "/outdir/secret.txt",
        // An index that leaves the root, asked for twice (the second time
        // as the file itself, which shares the directory's cache entry).
        "/leak/",
        "/leak/index.html",
        "/leak/",
    ] {
        let out = get(addr, path);
        assert!(
            matches!(status(&out), 403 | 404),
            "{path} must not be served: {out}"
        );
        assert!(!out.contains("secret\n"), "{path}: {out}");
    }
    let post = curl_text(&["-i", "-X", "POST", &format!("http://{addr}/a.txt")]);
    assert_eq!(status(&post), 405, "{post}");
    assert!(post.contains("allow: GET, HEAD\r\n"), "{post}");
}

/// The listing names a directory as nginx does, decoded (and escaped), and
/// links to a file whose name is not UTF-8 by its bytes, a link that works.
#[test]
fn odd_names_are_listed_and_served() {
    let (_dir, addr) = site();
    let listing = get(addr, "/a%20b%26%3Ci%3E/");
    assert_eq!(status(&listing), 200, "{listing}");
    let title = "Index of /a b&amp;&lt;i&gt;/";
    assert!(
        listing.contains(&format!("<title>{title}</title>")),
        "{listing}"
    );
    assert!(listing.contains(&format!("<h1>{title}</h1>")), "{listing}");
    assert!(
        listing.contains("<a href=\"bad%FFname.txt\">bad\u{FFFD}name.txt</a>"),
        "{listing}"
    );
    for path in [
        "/a%20b%26%3Ci%3E/bad%FFname.txt",
        "/a%20b&%3Ci%3E/bad%ffname.txt",
    ] {
        let out = get(addr, path);
        assert_eq!(status(&out), 200, "{path}: {out}");
        assert!(out.ends_with("\r\n\r\nlatin\n"), "{path}: {out}");
    }
    // The U+FFFD the listing shows is not the name.
    assert_eq!(
        status(&get(addr, "/a%20b%26%3Ci%3E/bad%EF%BF%BDname.txt")),
        404
    );
    // Byte paths get every defence UTF-8 ones do.
    for path in [
        "/out%FF",
        "/%FF/../secret.txt",
        "/%FF%2f..%2fsecret.txt",
        "/..%FF/../secret.txt",
        "/%FF%00",
        "/%2e%2e/%FF",
        "/%FF%5c..%5csecret.txt",
    ] {
        let out = get(addr, path);
        assert!(
            matches!(status(&out), 403 | 404),
            "{path} must not be served: {out}"
        );
        assert!(!out.contains("secret\n"), "{path}: {out}");
    }
    assert_eq!(
        status(&get(addr, "/out%FF")),
        403,
        "a symlink out of the root"
    );
}

/// A FIFO is not a file: refused at once (opening one for reading would wait for a writer),
/// and a directory whose index is one gets its listing.
#[test]
fn fifos_are_not_served() {
    let (_dir, addr) = site();
    let timed = |path: &str| curl_text(&["-i", "--max-time", "5", &format!("http://{addr}{path}")]);
    let out = timed("/pipe");
    assert_eq!(status(&out), 404, "{out}");
    let out = timed("/fifo/");
    assert_eq!(status(&out), 200, "{out}");
    assert!(out.contains(">index.html</a>"), "{out}");
}

/// A project directory: secrets in dotfiles at the top and deeper, a page,
/// and `.well-known` (at the top, and where it is only a dotfile).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for sub in [".git", "a/.hidden", "a/.well-known", ".well-known"] {
        fs::create_dir_all(root.join(sub)).expect("mkdir");
    }
    for (name, text) in [
        (".env", "TOKEN=env\n"),
        (".git/config", "[core] git\n"),
        ("a/.hidden/x", "hidden x\n"),
        ("a/.well-known/x", "nested\n"),
        ("a/page.txt", "page\n"),
        (".well-known/security.txt", "Contact: security\n"),
        (".well-known/.secret", "well-known secret\n"),
    ] {
        fs::write(root.join(name), text).expect("write");
    }
    dir
}

fn serve_project(root: &Path, dotfiles: Dotfiles) -> SocketAddr {
    let files = StaticFiles::new(root.to_path_buf())
        .expect("root")
        .dotfiles(dotfiles);
    start(ServerConfig::default(), files)
}

/// Each path is not found, exactly as a missing file is: no redirect, no
/// `403` that would tell it exists. Asked twice, so a cached answer would show.
fn assert_hidden(addr: SocketAddr, paths: &[&str]) {
    for path in paths.iter().chain(paths) {
        let out = get(addr, path);
        assert_eq!(status(&out), 404, "{path}: {out}");
        assert!(out.ends_with("\r\n\r\n404 Not Found\n"), "{path}: {out}");
    }
}

#[test]
fn dotfiles_are_not_found() {
    let dir = project();
    let addr = serve_project(dir.path(), Dotfiles::Hide);
    assert_hidden(addr, &["/.env", "//.env", "/./.env"]);
    assert_eq!(status(&get(addr, "/a/page.txt")), 200);
}

#[test]
fn dot_directories_and_their_contents_are_not_found() {
    let dir = project();
    let addr = serve_project(dir.path(), Dotfiles::Hide);
    assert_hidden(
        addr,
        &[
            "/.git",
            "/.git/",
            "/.git/config",
            "/a/.hidden",
            "/a/.hidden/",
            "/a/.hidden/x",
            "/a/.hidden/../page.txt",
            // Only the top-level `.well-known` is published.
            "/a/.well-known/x",
            "/.well-known/.secret",
        ],
    );
}

/// A symlink with a plain name leads where its name does not say: into a hidden directory,
/// to a hidden file, or as a directory's index. Hidden all the same; served when asked.
#[test]
fn symlinks_into_dotfiles_are_not_found() {
    let dir = project();
    let root = dir.path();
    fs::create_dir_all(root.join("b")).expect("mkdir");
    std::os::unix::fs::symlink(".git", root.join("public")).expect("symlink");
    std::os::unix::fs::symlink(".env", root.join("env.txt")).expect("symlink");
    std::os::unix::fs::symlink("../.env", root.join("b/index.html")).expect("symlink");
    std::os::unix::fs::symlink(".well-known", root.join("well")).expect("symlink");
    let hiding = serve_project(root, Dotfiles::Hide);
    assert_hidden(hiding, &["/public/config", "/public/", "/env.txt", "/b/"]);
    assert_eq!(status(&get(hiding, "/well/security.txt")), 200);
    let serving = serve_project(root, Dotfiles::Serve);
    for path in ["/public/config", "/env.txt", "/b/"] {
        assert_eq!(status(&get(serving, path)), 200, "{path}");
    }
}

#[test]
fn percent_encoded_dots_are_dots() {
    let dir = project();
    let addr = serve_project(dir.path(), Dotfiles::Hide);
    assert_hidden(
        addr,
        &[
            "/%2eenv",
            "/%2Eenv",
            "/%2Egit/config",
            "/.git/%63onfig",
            "/a/%2ehidden/x",
            "/%2ewell-known/%2esecret",
        ],
    );
}

#[test]
fn listings_leave_dotfiles_out() {
    let dir = project();
    let addr = serve_project(dir.path(), Dotfiles::Hide);
    let root = get(addr, "/");
    assert_eq!(status(&root), 200, "{root}");
    assert!(root.contains(">a/</a>"), "{root}");
    assert!(!root.contains(".env") && !root.contains(".git"), "{root}");
    let sub = get(addr, "/a/");
    assert!(sub.contains(">page.txt</a>"), "{sub}");
    assert!(
        !sub.contains(".hidden") && !sub.contains(".well-known"),
        "{sub}"
    );
}

/// RFC 8615's directory (ACME challenges, `security.txt`) is public.
#[test]
fn well_known_is_served_and_listed() {
    let dir = project();
    let addr = serve_project(dir.path(), Dotfiles::Hide);
    for path in ["/.well-known/security.txt", "/%2Ewell-known/security.txt"] {
        let out = get(addr, path);
        assert_eq!(status(&out), 200, "{path}: {out}");
        assert!(
            out.ends_with("\r\n\r\nContact: security\n"),
            "{path}: {out}"
        );
    }
    let redirect = get(addr, "/.well-known");
    assert!(
        redirect.contains("location: /.well-known/\r\n"),
        "{redirect}"
    );
    let listing = get(addr, "/.well-known/");
    assert_eq!(status(&listing), 200, "{listing}");
    assert!(listing.contains(">security.txt</a>"), "{listing}");
    assert!(!listing.contains(".secret"), "{listing}");
    assert!(get(addr, "/").contains(">.well-known/</a>"));
}

#[test]
fn dotfiles_are_served_when_asked() {
    let dir = project();
    let addr = serve_project(dir.path(), Dotfiles::Serve);
    for (path, text) in [
        ("/.env", "TOKEN=env\n"),
        ("/%2eenv", "TOKEN=env\n"),
        ("/.git/config", "[core] git\n"),
        ("/a/.hidden/x", "hidden x\n"),
        ("/.well-known/.secret", "well-known secret\n"),
    ] {
        let out = get(addr, path);
        assert_eq!(status(&out), 200, "{path}: {out}");
        assert!(out.ends_with(&format!("\r\n\r\n{text}")), "{path}: {out}");
    }
    let root = get(addr, "/");
    assert!(
        root.contains(">.env</a>") && root.contains(">.git/</a>"),
        "{root}"
    );
    assert!(get(addr, "/a/").contains(">.hidden/</a>"));
    assert!(get(addr, "/.well-known/").contains(">.secret</a>"));
}

/// The cache answers before any path check: a clone that serves dotfiles
/// must not hand the ones it opened to the original, which hides them.
#[test]
fn a_clone_that_serves_dotfiles_does_not_share_them() {
    let dir = project();
    let hiding = StaticFiles::new(dir.path().to_path_buf())
        .expect("root")
        .cache(Duration::from_secs(60), 16);
    let serving = hiding.clone().dotfiles(Dotfiles::Serve);
    let hiding = start(ServerConfig::default(), hiding);
    let serving = start(ServerConfig::default(), serving);
    assert_eq!(status(&get(serving, "/.env")), 200);
    assert_hidden(hiding, &["/.env"]);
}

#[test]
fn embedded_pages() {
    let site = EmbeddedSite::new()
        .page("/", "text/html; charset=utf-8", b"<h1>hi</h1>")
        .page("/x y", "text/plain", b"spaced");
    let addr = start(ServerConfig::default(), site);
    let out = get(addr, "/");
    assert!(
        out.contains("content-type: text/html; charset=utf-8\r\n"),
        "{out}"
    );
    assert!(out.ends_with("<h1>hi</h1>"), "{out}");
    assert!(get(addr, "/x%20y").ends_with("spaced"));
    assert_eq!(status(&get(addr, "/nope")), 404);
    let put = raw(
        addr,
        b"PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(statuses(&put), [405], "{put}");
}

/// A single-page app: navigations to routes that name no file get the root's index page,
/// while a missing asset, a request that does not take HTML and a file that exists are
/// answered as ever.
#[test]
fn a_single_page_app_gets_its_page_at_every_route() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("index.html"), "<div id=app></div>\n").expect("write");
    fs::write(dir.path().join("app.js"), "route()\n").expect("write");
    let files = StaticFiles::new(dir.path().to_owned())
        .expect("root")
        .single_page_app(true);
    let addr = start(ServerConfig::default(), files);
    let html = "accept: text/html,application/xhtml+xml,*/*;q=0.8";
    let navigate = |path: &str| {
        curl_text(&[
            "-s",
            "-H",
            html,
            "-w",
            " %{http_code}",
            &format!("http://{addr}{path}"),
        ])
    };
    for route in ["/settings/profile", "/settings", "/a%20b"] {
        assert_eq!(navigate(route), "<div id=app></div>\n 200", "{route}");
    }
    assert_eq!(navigate("/app.js"), "route()\n 200");
    assert!(navigate("/missing.js").ends_with(" 404"));
    let fetched = curl_text(&[
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("http://{addr}/settings"),
    ]);
    assert_eq!(fetched, "404");
    // Off, the route is not found.
    let plain = start(
        ServerConfig::default(),
        StaticFiles::new(dir.path().to_owned()).expect("root"),
    );
    let off = curl_text(&[
        "-s",
        "-H",
        html,
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("http://{plain}/settings"),
    ]);
    assert_eq!(off, "404");
}
