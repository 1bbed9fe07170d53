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

/// How the server picks its answers.
type Handler = dyn Fn(&Received) -> Reply + Send + Sync;

/// The server: it answers each connection with the next scripted reply (the
/// last one repeats), or with what a handler makes of the request, and keeps
/// every request.
#[derive(Debug)]
pub struct ScriptedServer {
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl ScriptedServer {
    /// Answers from a script. Bounded: a test never needs more than 64
    /// connections.
    pub fn start(script: Vec<Reply>) -> ScriptedServer {
        Self::start_on("127.0.0.1", script)
    }

    /// Answers from a script on another loopback address (`127.0.0.2`, say),
    /// for tests that need two hosts.
    pub fn start_on(address: &str, script: Vec<Reply>) -> ScriptedServer {
        let script = Mutex::new(std::collections::VecDeque::from(script));
        Self::serve_with(address, 64, move |_| {
            let mut script = script.lock().unwrap_or_else(|poison| poison.into_inner());
            let reply = if script.len() > 1 {
                script.pop_front()
            } else {
                script.front().cloned()
            };
            reply.unwrap_or(Reply::Hangup)
        })
    }

    /// Answers each request with what `handler` makes of it, for as long as
    /// the process runs.
    pub fn answering(
        handler: impl Fn(&Received) -> Reply + Send + Sync + 'static,
    ) -> ScriptedServer {
        Self::serve_with("127.0.0.1", usize::MAX, handler)
    }

    fn serve_with(
        address: &str,
        max_connections: usize,
        handler: impl Fn(&Received) -> Reply + Send + Sync + 'static,
    ) -> ScriptedServer {
        let listener = TcpListener::bind((address, 0)).expect("bind a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("a local address"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let thread_received = Arc::clone(&received);
        let handler: Arc<Handler> = Arc::new(handler);
        std::thread::spawn(move || {
            for stream in listener.incoming().take(max_connections) {
                let Ok(stream) = stream else { continue };
                let received = Arc::clone(&thread_received);
                let handler = Arc::clone(&handler);
                std::thread::spawn(move || serve(stream, handler.as_ref(), &received));
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

fn serve(stream: TcpStream, handler: &Handler, received: &Mutex<Vec<Received>>) {
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
    let request = Received {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let mut reply = handler(&request);
    if let Ok(mut received) = received.lock() {
        received.push(request);
    }
    let mut stream = reader.into_inner();
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

/// A stand-in for a multimodal model behind the OpenAI wire format, for the
/// benchmark and the end-to-end tests where no real model can run. It is no
/// model: it reads text and copies the recording.
/// - Asked to describe a window's elements (the describer's request: the
///   window image, then one image per element), it names each element by
///   the text `read_text` finds in it, or by its size when it has none.
/// - Asked for the next action (the vanilla strategy's request), it answers
///   with the next recorded action after those replayed so far, at its
///   recorded coordinates, and with `{}` after the last.
///
/// Token counts in its answers are estimates: a token per four characters of
/// text and 85 per image (OpenAI's price of a low-detail image).
pub fn stand_in_model(
    read_text: impl FnMut(&image::RgbaImage) -> String + Send + 'static,
) -> impl Fn(&Received) -> Reply + Send + Sync + 'static {
    let read_text = Mutex::new(read_text);
    move |request| {
        let Ok(body) = serde_json::from_str::<serde_json::Value>(&request.body) else {
            return Reply::json(
                400,
                serde_json::json!({"error": {"message": "the body is not JSON"}}),
            );
        };
        let mut texts = Vec::new();
        let mut images = Vec::new();
        for message in body["messages"].as_array().into_iter().flatten() {
            match &message["content"] {
                serde_json::Value::String(text) => texts.push(text.clone()),
                serde_json::Value::Array(parts) => {
                    for part in parts {
                        if let Some(text) = part["text"].as_str() {
                            texts.push(text.to_owned());
                        }
                        if let Some(url) = part["image_url"]["url"].as_str() {
                            images.push(decode_data_url(url));
                        }
                    }
                }
                _ => {}
            }
        }
        let prompt = texts.join("\n");
        let answer = if prompt.contains("Answer with a JSON array") {
            let mut read_text = read_text
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            let names: Vec<String> = images
                .iter()
                .skip(1)
                .map(|crop| match crop {
                    Some(crop) => {
                        let text = read_text(crop);
                        if text.trim().is_empty() {
                            format!("element without text, {}x{}", crop.width(), crop.height())
                        } else {
                            format!("element with the text {:?}", text.trim())
                        }
                    }
                    None => "an element that could not be decoded".to_owned(),
                })
                .collect();
            serde_json::json!(names).to_string()
        } else if prompt.contains("Recorded actions:") {
            next_recorded_action(&prompt).to_string()
        } else {
            "{}".to_owned()
        };
        let prompt_tokens = prompt.len() / 4 + 85 * images.len();
        Reply::json(
            200,
            serde_json::json!({
                "choices": [{"message": {"role": "assistant", "content": answer}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": answer.len() / 4 + 1},
            }),
        )
    }
}

fn decode_data_url(url: &str) -> Option<image::RgbaImage> {
    use base64::Engine as _;
    let data = url.strip_prefix("data:image/png;base64,")?;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    Some(image::load_from_memory(&png).ok()?.into_rgba8())
}

/// The recorded action after those replayed so far, as an action object.
fn next_recorded_action(prompt: &str) -> serde_json::Value {
    let list = |label: &str| -> Vec<String> {
        prompt
            .lines()
            .find_map(|line| line.strip_prefix(label))
            .and_then(|json| serde_json::from_str(json.trim()).ok())
            .unwrap_or_default()
    };
    let recorded = list("Recorded actions:");
    let replayed = list("Actions replayed so far:");
    let Some(next) = recorded.get(replayed.len()) else {
        return serde_json::json!({});
    };
    let name = next.split_whitespace().next().unwrap_or("");
    let point = next.split_once(" at (").and_then(|(_, rest)| {
        let (x, rest) = rest.split_once(", ")?;
        let (y, _) = rest.split_once(')')?;
        Some((x.parse::<f64>().ok()?, y.parse::<f64>().ok()?))
    });
    let text: Option<String> = next
        .find('"')
        .and_then(|quote| serde_json::from_str(&next[quote..]).ok());
    match (name, point, text) {
        (_, Some((x, y)), _) => serde_json::json!({"name": name, "mouse_x": x, "mouse_y": y}),
        ("type", None, Some(keys)) => {
            // A key parent's text: its presses joined with '-', named keys
            // as <name>.
            let pieces: Vec<&str> = keys.split('-').collect();
            match pieces.as_slice() {
                [named] if named.starts_with('<') && named.ends_with('>') => {
                    serde_json::json!({"name": "key", "key": &named[1..named.len() - 1]})
                }
                _ => {
                    serde_json::json!({"name": "type", "text": pieces.iter().filter(|piece| piece.chars().count() == 1).copied().collect::<String>()})
                }
            }
        }
        _ => serde_json::json!({}),
    }
}
