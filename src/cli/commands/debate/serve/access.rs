//! Whom `plexus serve` answers: a request must name the server in its `Host` (so a page
//! that rebinds its own name to 127.0.0.1 is refused), come from no browser origin, the
//! server's own, or one `--allow-origin` allows, and carry the `--token` when one is
//! set. An allowed origin gets the CORS headers a browser needs, preflight included.

use std::net::{IpAddr, SocketAddr};

use hyper::header::{HeaderMap, HeaderValue};
use hyper::Method;
use serde_json::json;
use subtle::ConstantTimeEq;

use crate::base::http_server::header;

/// Headers to send with an answer.
pub type Headers = Vec<(&'static str, HeaderValue)>;

/// The rules of one server.
#[derive(Debug, Clone)]
pub struct Access {
    /// `host:port` names the server answers to, lower-cased; `None`: any name with the
    /// right port (a server on every address, guarded by its token).
    hosts: Option<Vec<String>>,
    port: u16,
    origins: Vec<String>,
    token: Option<String>,
}

/// A request refused: status, headers and JSON body.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// HTTP status.
    pub status: u16,
    /// Headers of the answer.
    pub headers: Headers,
    /// JSON body.
    pub body: String,
}

/// What to do with a request that passed.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// A browser's preflight of an allowed origin: answer 204 with these headers.
    Preflight(Headers),
    /// Serve it, adding these headers to the answer.
    Serve(Headers),
}

fn refusal(status: u16, headers: Headers, message: String) -> Refusal {
    Refusal {
        status,
        headers,
        body: json!({ "error": message }).to_string(),
    }
}

fn value(s: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(s).ok()
}

impl Access {
    /// The rules of a server listening on `addr`, letting pages of `origins` call (each
    /// spelled as a browser sends it: `https://app.example`), asking for `token` when set.
    pub fn new(addr: SocketAddr, origins: Vec<String>, token: Option<String>) -> Access {
        let port = addr.port();
        let ip = |ip: IpAddr| match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        };
        let hosts = if addr.ip().is_unspecified() {
            None
        } else {
            let mut names = vec![ip(addr.ip())];
            if addr.ip().is_loopback() {
                names.extend(["localhost".into(), "127.0.0.1".into(), "[::1]".into()]);
            }
            if port != 80 {
                names = names.iter().map(|n| format!("{n}:{port}")).collect();
            } else {
                let with_port: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
                names.extend(with_port);
            }
            let mut hosts: Vec<String> = Vec::new();
            for n in names {
                if !hosts.contains(&n) {
                    hosts.push(n);
                }
            }
            Some(hosts)
        };
        Access {
            hosts,
            port,
            origins,
            token,
        }
    }

    /// Checks a request's Host, Origin and token, in that order.
    pub fn check(&self, method: &Method, headers: &HeaderMap) -> Result<Verdict, Refusal> {
        // A header that decides who may call is read once: two of them (which a proxy
        // and a page could each add) leave no one answer to check.
        for name in ["host", "origin", "authorization"] {
            if headers.get_all(name).iter().count() > 1 {
                return Err(refusal(
                    400,
                    Headers::new(),
                    format!("the request has more than one `{name}` header; send it once"),
                ));
            }
        }
        let host = self.host(headers)?;
        let mut cors = Headers::new();
        if !self.origins.is_empty() {
            cors.push(("vary", HeaderValue::from_static("Origin")));
        }
        if let Some(origin) = header(headers, "origin") {
            let origin = origin.to_ascii_lowercase();
            let own = origin == format!("http://{host}");
            if !own {
                if !self.origins.contains(&origin) {
                    let message = if origin == "null" {
                        "pages without an origin of their own (a local file, a sandboxed frame) may not call this server; serve the front end from an address and start the server with --allow-origin ORIGIN".to_string()
                    } else {
                        format!("pages of origin {origin} may not call this server; start it with --allow-origin {origin} to let them")
                    };
                    return Err(refusal(403, cors, message));
                }
                if let Some(v) = value(&origin) {
                    cors.push(("access-control-allow-origin", v));
                }
                cors.push((
                    "access-control-expose-headers",
                    HeaderValue::from_static("X-Plexus-Session"),
                ));
            }
            if method == Method::OPTIONS && headers.contains_key("access-control-request-method") {
                cors.extend([
                    (
                        "access-control-allow-methods",
                        HeaderValue::from_static("GET, POST, OPTIONS"),
                    ),
                    (
                        "access-control-allow-headers",
                        HeaderValue::from_static("Content-Type, Authorization"),
                    ),
                    ("access-control-max-age", HeaderValue::from_static("600")),
                ]);
                return Ok(Verdict::Preflight(cors));
            }
        }
        self.token(headers, cors.clone())?;
        Ok(Verdict::Serve(cors))
    }

    /// The request's Host, if it names this server.
    fn host(&self, headers: &HeaderMap) -> Result<String, Refusal> {
        let Some(host) = header(headers, "host") else {
            return Err(refusal(
                400,
                Headers::new(),
                "the request has no Host header".into(),
            ));
        };
        let host = host.to_ascii_lowercase();
        let ours = match &self.hosts {
            Some(hosts) => hosts.contains(&host),
            None => {
                // The name's port (none after a bracketed IPv6 address means 80).
                let after_ip6 = host.rsplit(']').next().unwrap_or_default();
                match after_ip6.rsplit_once(':') {
                    Some((_, port)) => port == self.port.to_string(),
                    None => self.port == 80,
                }
            }
        };
        if ours {
            return Ok(host);
        }
        let names = match &self.hosts {
            Some(h) => h.join(", "),
            None => format!("any name with port {}", self.port),
        };
        Err(refusal(
            421,
            Headers::new(),
            format!("this server answers to {names}, not to Host {host:?}"),
        ))
    }

    /// Refuses a request without the token (when one is set).
    fn token(&self, headers: &HeaderMap, cors: Headers) -> Result<(), Refusal> {
        let Some(want) = &self.token else {
            return Ok(());
        };
        let given = header(headers, "authorization").and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
        let (message, challenge) = match given {
            Some(t) if bool::from(t.as_bytes().ct_eq(want.as_bytes())) => return Ok(()),
            Some(_) => (
                "the bearer token is wrong",
                r#"Bearer error="invalid_token""#,
            ),
            None => (
                "this server needs `Authorization: Bearer TOKEN` (the token it was started with)",
                "Bearer",
            ),
        };
        let mut headers = cors;
        headers.push(("www-authenticate", HeaderValue::from_static(challenge)));
        Err(refusal(401, headers, message.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(*n, HeaderValue::from_str(v).expect("a header value"));
        }
        h
    }

    fn loopback() -> Access {
        Access::new(
            "127.0.0.1:8080".parse().expect("addr"),
            vec!["https://app.example".into()],
            Some("s3cret".into()),
        )
    }

    fn status(r: Result<Verdict, Refusal>) -> u16 {
        match r {
            Ok(Verdict::Preflight(_)) => 204,
            Ok(Verdict::Serve(_)) => 200,
            Err(r) => r.status,
        }
    }

    #[test]
    fn two_host_origin_or_token_headers_are_refused_whichever_comes_first() {
        let a = loopback();
        let token = ("authorization", "Bearer s3cret");
        for pairs in [
            vec![
                ("host", "127.0.0.1:8080"),
                ("host", "evil.example:8080"),
                token,
            ],
            vec![
                ("host", "evil.example:8080"),
                ("host", "127.0.0.1:8080"),
                token,
            ],
            vec![
                ("host", "127.0.0.1:8080"),
                ("origin", "https://app.example"),
                ("origin", "https://evil.example"),
                token,
            ],
            vec![
                ("host", "127.0.0.1:8080"),
                token,
                ("authorization", "Bearer x"),
            ],
        ] {
            assert_eq!(
                status(a.check(&Method::POST, &headers(&pairs))),
                400,
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn loopback_answers_to_its_names_and_port_only() {
        let a = loopback();
        let ok = |host| {
            status(a.check(
                &Method::POST,
                &headers(&[("host", host), ("authorization", "Bearer s3cret")]),
            ))
        };
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
        ] {
            assert_eq!(ok(host), 200, "{host}");
        }
        for host in [
            "evil.example:8080",
            "localhost",
            "127.0.0.1:8081",
            "0.0.0.0:8080",
        ] {
            assert_eq!(ok(host), 421, "{host}");
        }
        assert_eq!(
            status(a.check(&Method::POST, &headers(&[]))),
            400,
            "no Host"
        );
    }

    #[test]
    fn a_server_on_every_address_takes_any_name_with_its_port() {
        let a = Access::new("0.0.0.0:9000".parse().expect("addr"), vec![], None);
        let st = |host| status(a.check(&Method::POST, &headers(&[("host", host)])));
        assert_eq!(st("box.lan:9000"), 200);
        assert_eq!(st("box.lan:9001"), 421);
    }

    #[test]
    fn the_token_is_asked_for_except_on_a_preflight() {
        let a = loopback();
        let host = ("host", "127.0.0.1:8080");
        let r = a
            .check(&Method::POST, &headers(&[host]))
            .expect_err("no token");
        assert_eq!(r.status, 401);
        assert!(r
            .headers
            .iter()
            .any(|(n, v)| *n == "www-authenticate" && v == "Bearer"));
        let wrong = a
            .check(
                &Method::POST,
                &headers(&[host, ("authorization", "Bearer s3cre")]),
            )
            .expect_err("wrong token");
        assert_eq!(wrong.status, 401);
        assert!(!wrong.body.contains("s3cre"), "{}", wrong.body);
        let lower = headers(&[host, ("authorization", "bearer s3cret")]);
        assert_eq!(status(a.check(&Method::POST, &lower)), 200);
        let preflight = headers(&[
            host,
            ("origin", "https://app.example"),
            ("access-control-request-method", "POST"),
        ]);
        assert_eq!(status(a.check(&Method::OPTIONS, &preflight)), 204);
    }

    #[test]
    fn an_allowed_origin_gets_cors_headers_and_another_is_refused() {
        let a = loopback();
        let h = headers(&[
            ("host", "localhost:8080"),
            ("origin", "https://app.example"),
            ("authorization", "Bearer s3cret"),
        ]);
        let Ok(Verdict::Serve(cors)) = a.check(&Method::POST, &h) else {
            panic!("an allowed origin");
        };
        let get = |n: &str| cors.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone());
        assert_eq!(
            get("access-control-allow-origin").expect("ACAO"),
            "https://app.example"
        );
        assert_eq!(
            get("access-control-expose-headers").expect("expose"),
            "X-Plexus-Session"
        );
        let evil = headers(&[
            ("host", "localhost:8080"),
            ("origin", "https://evil.example"),
            ("authorization", "Bearer s3cret"),
        ]);
        let r = a.check(&Method::POST, &evil).expect_err("refused");
        assert_eq!(r.status, 403);
        assert!(r.body.contains("--allow-origin https://evil.example"));
        // The server's own origin needs no flag.
        let own = headers(&[
            ("host", "localhost:8080"),
            ("origin", "http://localhost:8080"),
            ("authorization", "Bearer s3cret"),
        ]);
        assert_eq!(status(a.check(&Method::POST, &own)), 200);
    }
}
