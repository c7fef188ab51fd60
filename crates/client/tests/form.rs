//! `multipart/form-data` bodies from both clients, parsed by Python's email package (the
//! peer in `scripts/form_echo.py`): every field and file comes out as it went in.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use ringwire_client::{blocking, tokio as async_client, Form, RequestBuffer, Url};

/// `scripts/form_echo.py`, killed when dropped.
struct FormEcho {
    child: Child,
    url: Url,
}

impl FormEcho {
    fn start() -> FormEcho {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/form_echo.py");
        let mut child = Command::new("python3")
            .arg(script)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 is installed");
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        let url = Url::parse(&format!("http://127.0.0.1:{}/upload", port.trim())).unwrap();
        FormEcho { child, url }
    }
}

impl Drop for FormEcho {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn both_clients_send_forms_that_python_reads_back() {
    let echo = FormEcho::start();
    // Bytes a careless encoder would trip on: CRLF, dashes, every byte value.
    let binary: Vec<u8> = (0..=255u8)
        .chain(*b"\r\n--\r\n--")
        .cycle()
        .take(70_000)
        .collect();
    let form = Form::new()
        .text("title", "ring wire")
        .file(
            "doc",
            "notes.txt",
            Some("text/plain"),
            b"line 1\r\nline 2\r\n",
        )
        .file("blob", "blob.bin", None, &binary)
        .text("empty", "");
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let expected = format!(
        "title|-|-|{}\ndoc|notes.txt|text/plain|{}\nblob|blob.bin|application/octet-stream|{}\nempty|-|-|\n",
        hex(b"ring wire"),
        hex(b"line 1\r\nline 2\r\n"),
        hex(&binary)
    );

    let client = blocking::Client::default();
    let mut buffer = RequestBuffer::new().unwrap();
    buffer.reserve(128 << 10).unwrap();
    let request = buffer
        .request("POST", &echo.url)
        .unwrap()
        .headers()
        .unwrap()
        .form(&form)
        .unwrap();
    let mut response = client.send(&mut buffer, &request).unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        String::from_utf8(response.bytes().unwrap()).unwrap(),
        expected
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let got = runtime.block_on(async {
        let client = async_client::Client::default();
        let mut buffer = RequestBuffer::new().unwrap();
        buffer.reserve(128 << 10).unwrap();
        let request = buffer.request("POST", &echo.url)?.headers()?.form(&form)?;
        let mut response = client.send(&mut buffer, &request).await?;
        response.bytes().await
    });
    assert_eq!(String::from_utf8(got.unwrap()).unwrap(), expected);

    // Too large for the ring as it is: the error says so, nothing is sent.
    let mut small = RequestBuffer::new().unwrap();
    let err = small
        .request("POST", &echo.url)
        .unwrap()
        .headers()
        .unwrap()
        .form(&Form::new().file("big", "big", None, &vec![0; 8 << 20]))
        .unwrap_err();
    assert!(
        matches!(err, ringwire_client::Error::BodyExceedsSendRing { .. }),
        "{err}"
    );
}

#[test]
fn forms_with_files_of_any_size_stream_from_both_clients() {
    let echo = FormEcho::start();
    let url = Url::parse(&echo.url.to_string().replace("/upload", "/crc")).unwrap();
    // Far larger than the send ring, with what a careless encoder would trip on.
    let data: Vec<u8> = (0..=255u8)
        .chain(*b"\r\n--\r\n--")
        .cycle()
        .take((6 << 20) + 3)
        .collect();
    let path = std::env::temp_dir().join(format!("ringwire-form-{}.bin", std::process::id()));
    std::fs::write(&path, &data).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let form = Form::new()
        .text("title", "ring wire")
        .file_from("video", "talk.bin", Some("video/mp4"), &file)
        .unwrap()
        .file("small", "s.txt", None, b"tail");
    let crc = |bytes: &[u8]| {
        let mut crc = flate2::Crc::new();
        crc.update(bytes);
        format!("{}|{:08x}", bytes.len(), crc.sum())
    };
    let expected = format!(
        "title|-|-|{}\nvideo|talk.bin|video/mp4|{}\nsmall|s.txt|application/octet-stream|{}\n",
        crc(b"ring wire"),
        crc(&data),
        crc(b"tail")
    );

    let client = blocking::Client::default();
    let mut buffer = RequestBuffer::new().unwrap();
    let head = buffer.request("POST", &url).unwrap().headers().unwrap();
    let (request, body) = head.form_stream(&form).unwrap();
    let mut response = client.send_streamed(&mut buffer, &request, body).unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        String::from_utf8(response.bytes().unwrap()).unwrap(),
        expected
    );
    drop(response);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let got = runtime.block_on(async {
        let client = async_client::Client::default();
        let head = buffer.request("POST", &url)?.headers()?;
        let (request, body) = head.form_stream(&form)?;
        let mut response = client.send_streamed(&mut buffer, &request, body).await?;
        response.bytes().await
    });
    assert_eq!(String::from_utf8(got.unwrap()).unwrap(), expected);

    // The same body, written whole, and its announced length.
    let boundary = form.boundary().unwrap();
    let mut whole = Vec::new();
    form.write(&boundary, &mut whole).unwrap();
    assert_eq!(whole.len() as u64, form.len(&boundary));
    let mut streamed = Vec::new();
    std::io::Read::read_to_end(&mut form.reader(&boundary), &mut streamed).unwrap();
    assert_eq!(whole, streamed);

    // A file that shrank since it was added: the request fails, saying why.
    std::fs::write(&path, b"short").unwrap();
    let head = buffer.request("POST", &url).unwrap().headers().unwrap();
    let (request, body) = head.form_stream(&form).unwrap();
    let err = client
        .send_streamed(&mut buffer, &request, body)
        .unwrap_err();
    assert!(
        matches!(&err, ringwire_client::Error::BodySource(e) if e.kind() == std::io::ErrorKind::UnexpectedEof),
        "{err}"
    );
    std::fs::remove_file(&path).unwrap();
}
