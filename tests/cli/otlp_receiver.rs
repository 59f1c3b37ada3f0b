//! A tiny OTLP/HTTP receiver for the tests: it records each request it accepts and
//! answers from a script of statuses, after a delay.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    pub content_type: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A tiny OTLP/HTTP receiver: answers each request with the next status of its script
/// (then 200), after `delay`.
pub struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub fn start(script: Vec<u16>, delay: Duration) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script));
        let g = got.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (g, script) = (g.clone(), script.clone());
                std::thread::spawn(move || serve(conn, &g, &script, delay));
            }
        });
        Receiver { port, got }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Received> {
        self.got.lock().expect("lock").clone()
    }

    /// Every span received (protobuf requests).
    pub fn spans(&self) -> Vec<Span> {
        self.requests()
            .iter()
            .flat_map(|r| {
                assert_eq!(r.content_type, "application/x-protobuf");
                let req = ExportTraceServiceRequest::decode(r.body.as_slice()).expect("decodes");
                req.resource_spans
                    .into_iter()
                    .flat_map(|rs| rs.scope_spans)
                    .flat_map(|ss| ss.spans)
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

fn serve(conn: TcpStream, got: &Mutex<Vec<Received>>, script: &Mutex<Vec<u16>>, delay: Duration) {
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    let mut conn = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let len: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let content_type = headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        std::thread::sleep(delay);
        let status = {
            let mut s = script.lock().expect("lock");
            if s.is_empty() {
                200
            } else {
                s.remove(0)
            }
        };
        if status == 200 {
            got.lock().expect("lock").push(Received {
                content_type,
                headers,
                body,
            });
        }
        let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nretry-after: 0\r\n\r\n");
        if conn.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}
