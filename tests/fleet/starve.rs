//! Clients that connect and say nothing, or send half a request, do not
//! starve the server: others are answered meanwhile, and the server closes
//! the idle ones by itself.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::{Redis, Server, USER_TOKEN};

/// How long the server gives a client to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

#[test]
fn idle_and_half_sent_connections_starve_no_one_and_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &[]);
    let opened = Instant::now();
    let mut idle: Vec<TcpStream> = (0..400)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap())
        .collect();
    // Half a header, and a whole header with half its body.
    for _ in 0..20 {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        stream
            .write_all(b"GET /api/jobs HTTP/1.1\r\nHost: x\r\n")
            .unwrap();
        idle.push(stream);
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        write!(
            stream,
            "POST /api/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {USER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"recor"
        )
        .unwrap();
        idle.push(stream);
    }
    // Meanwhile everyone else is answered.
    for _ in 0..20 {
        let (status, answer) = server.http("GET", "/api/jobs", Some(USER_TOKEN), b"");
        assert_eq!(status, 200, "{answer}");
    }
    // The idle and half-headed ones are closed by the server once their
    // headers are late (the half bodies wait for the request's own limit).
    for stream in &mut idle[..400] {
        stream.set_read_timeout(Some(HEADER_TIMEOUT * 3)).unwrap();
        let mut byte = [0u8; 64];
        match stream.read(&mut byte) {
            Ok(_) => {}
            Err(err) => panic!(
                "an idle connection still open after {:.0?}: {err}",
                opened.elapsed()
            ),
        }
    }
    assert!(
        opened.elapsed() >= HEADER_TIMEOUT - Duration::from_secs(1),
        "closed before the headers were late: {:.1?}",
        opened.elapsed()
    );
    // And the server still answers.
    let (status, _) = server.http("GET", "/api/jobs", Some(USER_TOKEN), b"");
    assert_eq!(status, 200);
}
