use super::sse::MAX_SSE_BLOCK;
use super::*;

#[test]
fn an_sse_block_reads_as_its_event() {
    let block = "id: 7\nevent: state\ndata: {\"id\":7,\"job\":\"j\",\"kind\":\"state\",\"attempt\":1,\"data\":{\"state\":\"running\"},\"at\":\"t\"}\n\n";
    let event = parse_sse(block).unwrap();
    assert_eq!(event.id, 7);
    assert_eq!(event.data["state"], "running");
    assert!(parse_sse(": keep-alive\n\n").is_none());
}

#[test]
fn a_state_event_reads_as_its_change_and_a_line() {
    let block = "data: {\"id\":8,\"job\":\"j\",\"kind\":\"state\",\"attempt\":2,\"data\":{\"state\":\"queued\",\"reason\":\"next attempt\",\"worker\":null},\"at\":\"t\"}\n\n";
    let event = parse_sse(block).unwrap();
    assert_eq!(
        event.state_change(),
        Some(crate::fleet::StateChange {
            state: JobState::Queued,
            reason: Some("next attempt".into()),
            worker: None,
        })
    );
    assert_eq!(event_line(&event), "t attempt 2: queued (next attempt)");
    let step = "data: {\"id\":9,\"job\":\"j\",\"kind\":\"step\",\"attempt\":2,\"data\":{\"step\":0,\"status\":\"verified\"},\"at\":\"t\"}\n\n";
    assert_eq!(parse_sse(step).unwrap().state_change(), None);
}

#[test]
fn a_character_split_across_chunks_arrives_whole() {
    let block = "data: {\"id\":1,\"job\":\"j\",\"kind\":\"step\",\"attempt\":1,\"data\":{\"note\":\"Zoë 字\"},\"at\":\"t\"}\n\n";
    let bytes = block.as_bytes();
    let split = block.find('ë').unwrap() + 1; // inside its two bytes
    let mut buffer = bytes[..split].to_vec();
    assert!(sse_blocks(&mut buffer).unwrap().is_empty());
    buffer.extend_from_slice(&bytes[split..]);
    let blocks = sse_blocks(&mut buffer).unwrap();
    assert_eq!(blocks, [block]);
    assert_eq!(parse_sse(&blocks[0]).unwrap().data["note"], "Zoë 字");
    assert!(buffer.is_empty());
    let mut endless = vec![b'x'; MAX_SSE_BLOCK + 1];
    assert!(sse_blocks(&mut endless).is_err());
}

/// A server (or proxy) that answers 401 with the request it was sent.
fn echoing_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        use std::io::{BufRead as _, Write as _};
        let (stream, _) = listener.accept().unwrap();
        let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
        let mut request = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                break;
            }
            request.push_str(&line);
        }
        let body = format!(
            "{{\"error\":{{\"code\":\"unauthorized\",\"message\":\"you sent {}\"}}}}",
            request.replace(['\r', '\n', '"'], " ")
        );
        let mut stream = stream;
        write!(stream, "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).unwrap();
    });
    format!("http://{address}")
}

#[test]
fn a_server_that_echoes_the_token_never_gets_it_printed() {
    let token = "tok-0123456789abcdef-secret";
    let api = Api {
        base: echoing_server(),
        token: token.to_owned(),
        client: crate::llm::http::client_builder().build().unwrap(),
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    };
    let err = api
        .call::<serde_json::Value>(
            reqwest::Method::GET,
            "/api/jobs",
            None::<&()>,
            Duration::from_secs(10),
        )
        .unwrap_err();
    let shown = format!("{:#}", anyhow::Error::new(err));
    assert!(
        shown.contains("401") && shown.contains("[redacted]"),
        "{shown}"
    );
    assert!(
        !shown.contains(token) && !shown.contains("0123456789abcdef"),
        "{shown}"
    );
}

#[test]
fn an_id_stays_one_path_segment() {
    assert_eq!(path_part("../../metrics?x"), "metricsx");
    assert_eq!(path_part("3f2a-77"), "3f2a-77");
}
