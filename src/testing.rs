//! Test support shared by the unit and integration tests: a real HTTP/1.1
//! server on the loopback interface that answers from a script, so that the
//! LLM providers are tested over real HTTP with their real wire formats.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Status, extra headers, body.
    Http(u16, Vec<(String, String)>, String),
    /// Wait this long before answering with the reply inside.
    Stall(Duration, Box<Reply>),
    /// Close the connection without answering.
    Hangup,
}

impl Reply {
    pub fn json(status: u16, body: serde_json::Value) -> Reply {
        Reply::Http(status, vec![], body.to_string())
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// The server: it answers each connection with the next scripted reply (the
/// last one repeats), and keeps every request.
#[derive(Debug)]
pub struct ScriptedServer {
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl ScriptedServer {
    pub fn start(script: Vec<Reply>) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("a local address"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let thread_received = Arc::clone(&received);
        std::thread::spawn(move || {
            let mut script = std::collections::VecDeque::from(script);
            // Bounded: a test never needs more than this many connections.
            for stream in listener.incoming().take(64) {
                let Ok(stream) = stream else { continue };
                let reply = if script.len() > 1 {
                    script.pop_front()
                } else {
                    script.front().cloned()
                };
                let Some(reply) = reply else { break };
                let received = Arc::clone(&thread_received);
                std::thread::spawn(move || serve(stream, reply, &received));
            }
        });
        ScriptedServer { url, received }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received
            .lock()
            .map(|received| received.clone())
            .unwrap_or_default()
    }
}

fn serve(stream: TcpStream, reply: Reply, received: &Mutex<Vec<Received>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let (method, path) = (
        parts.next().unwrap_or("").to_owned(),
        parts.next().unwrap_or("").to_owned(),
    );
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() || line.trim().is_empty() {
            break;
        }
        if let Some((key, value)) = line.trim_end().split_once(':') {
            headers.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    if let Ok(mut received) = received.lock() {
        received.push(Received {
            method,
            path,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
    }
    let mut stream = reader.into_inner();
    let mut reply = reply;
    loop {
        match reply {
            Reply::Stall(delay, inner) => {
                std::thread::sleep(delay);
                reply = *inner;
            }
            Reply::Hangup => return,
            Reply::Http(status, extra, body) => {
                let mut head = format!(
                    "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                for (key, value) in extra {
                    head.push_str(&format!("{key}: {value}\r\n"));
                }
                head.push_str("\r\n");
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
                let _ = stream.flush();
                return;
            }
        }
    }
}
