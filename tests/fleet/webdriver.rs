//! A WebDriver client just big enough for the console's test: Debian's
//! chromedriver driving headless Chromium, spoken to over HTTP/1.1 and
//! JSON (the W3C protocol).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The key W3C WebDriver names an element by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Browser {
    pub fn start() -> Browser {
        let port = super::free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver (is the chromium-driver package installed?)");
        crate::harness::wait_for("chromedriver to listen", || {
            super::answers(port).then_some(())
        });
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,900"]
            }
        }}});
        let answer = http(port, "POST", "/session", &capabilities);
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {answer}"))
            .to_owned();
        Browser {
            driver,
            port,
            session,
        }
    }

    /// A command of this session; its `value`.
    fn call(&self, method: &str, path: &str, body: &Value) -> Value {
        let answer = http(
            self.port,
            method,
            &format!("/session/{}{path}", self.session),
            body,
        );
        answer["value"].clone()
    }

    pub fn goto(&self, url: &str) {
        self.call("POST", "/url", &json!({ "url": url }));
    }

    pub fn url(&self) -> String {
        self.call("GET", "/url", &Value::Null)
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The first element `css` selects, if any.
    pub fn find(&self, css: &str) -> Option<String> {
        let value = self.call(
            "POST",
            "/element",
            &json!({"using": "css selector", "value": css}),
        );
        value[ELEMENT].as_str().map(str::to_owned)
    }

    fn must(&self, css: &str) -> String {
        self.find(css)
            .unwrap_or_else(|| panic!("no element {css:?} on {}", self.url()))
    }

    pub fn text(&self, css: &str) -> Option<String> {
        let element = self.find(css)?;
        self.call("GET", &format!("/element/{element}/text"), &Value::Null)
            .as_str()
            .map(str::to_owned)
    }

    pub fn type_in(&self, css: &str, text: &str) {
        let element = self.must(css);
        self.call(
            "POST",
            &format!("/element/{element}/value"),
            &json!({ "text": text }),
        );
    }

    pub fn click(&self, css: &str) {
        let element = self.must(css);
        self.call("POST", &format!("/element/{element}/click"), &json!({}));
    }

    /// Runs `script` in the page (a promise it returns is awaited).
    pub fn script(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            &json!({"script": script, "args": []}),
        )
    }

    pub fn screenshot(&self, path: &Path) {
        use base64::Engine as _;
        let value = self.call("GET", "/screenshot", &Value::Null);
        let png = base64::engine::general_purpose::STANDARD
            .decode(value.as_str().unwrap_or_default())
            .expect("a screenshot in base64");
        std::fs::write(path, png).unwrap();
    }

    /// Waits until the element `css` shows `want`.
    pub fn wait_text(&self, css: &str, want: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let shown = self.text(css);
            if shown.as_deref() == Some(want) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{css:?} shows {shown:?}, not {want:?}, after {limit:?} on {}",
                self.url()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| {
            http(
                self.port,
                "DELETE",
                &format!("/session/{}", self.session),
                &Value::Null,
            )
        });
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// One request to chromedriver; its JSON answer.
fn http(port: u16, method: &str, path: &str, body: &Value) -> Value {
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("reach chromedriver");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    // chromedriver keeps the connection open whatever it says: read the
    // head, then as many bytes as it announces.
    let mut response = Vec::new();
    let mut buffer = [0u8; 65_536];
    let (head_end, length) = loop {
        let n = stream.read(&mut buffer).expect("chromedriver's answer");
        assert!(
            n > 0,
            "chromedriver closed without an answer to {method} {path}"
        );
        response.extend_from_slice(&buffer[..n]);
        if let Some(at) = response.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&response[..at]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or_else(|| panic!("no Content-Length in {head}"));
            break (at + 4, length);
        }
    };
    while response.len() < head_end + length {
        let n = stream.read(&mut buffer).expect("chromedriver's answer");
        assert!(
            n > 0,
            "chromedriver's answer to {method} {path} was cut short"
        );
        response.extend_from_slice(&buffer[..n]);
    }
    let body = &response[head_end..head_end + length];
    serde_json::from_slice(body).unwrap_or_else(|err| {
        panic!(
            "{method} {path}: {err}: {}",
            String::from_utf8_lossy(&response)
        )
    })
}
