//! Where and how spans are sent: the endpoint (`--otlp URL`, the config's `[otlp]`
//! table, or the standard `OTEL_EXPORTER_OTLP_*` variables), the protocol (protobuf, or
//! JSON when asked) and the headers.

use std::collections::BTreeMap;

/// The encoding of the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf` (`application/x-protobuf`), the default.
    Protobuf,
    /// `http/json` (`application/json`).
    Json,
}

impl Protocol {
    /// The request's content type.
    pub fn content_type(self) -> &'static str {
        match self {
            Protocol::Protobuf => "application/x-protobuf",
            Protocol::Json => "application/json",
        }
    }
}

/// Everything the exporter needs.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpSettings {
    /// The full traces URL (`…/v1/traces`).
    pub url: String,
    /// Encoding.
    pub protocol: Protocol,
    /// Headers sent with every request (never printed: they may hold credentials).
    pub headers: Vec<(String, String)>,
    /// Send prompts and answers (`--otlp-content`).
    pub content: bool,
}

/// The `[otlp]` table of the config: `endpoint`, `protocol`, `headers`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigOtlp {
    /// `endpoint`: the collector's base URL.
    pub endpoint: Option<String>,
    /// `protocol`: `http/protobuf` or `http/json`.
    pub protocol: Option<String>,
    /// `headers`: a table of header names and values.
    pub headers: BTreeMap<String, String>,
}

impl ConfigOtlp {
    /// Reads the `[otlp]` table of `config` (absent: all empty); `file` names the config
    /// file in errors.
    pub fn from_config(config: &crate::base::config::Config) -> Result<ConfigOtlp, String> {
        let file = config.file_label();
        let Some(v) = config.other.get("otlp") else {
            return Ok(ConfigOtlp::default());
        };
        let Some(table) = v.as_table() else {
            return Err(format!("{file}: otlp must be a table: [otlp]"));
        };
        let mut out = ConfigOtlp::default();
        for (key, value) in table {
            let text = |what: &str| {
                value
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{file}: otlp.{key} must be a string ({what})"))
            };
            match key.as_str() {
                "endpoint" => out.endpoint = Some(text("the collector's URL")?),
                "protocol" => out.protocol = Some(text("http/protobuf or http/json")?),
                "headers" => {
                    let Some(h) = value.as_table() else {
                        return Err(format!(
                            "{file}: otlp.headers must be a table of names and values"
                        ));
                    };
                    for (name, v) in h {
                        let Some(v) = v.as_str() else {
                            return Err(format!("{file}: otlp.headers.{name} must be a string"));
                        };
                        out.headers.insert(name.clone(), v.to_string());
                    }
                }
                // The loader refused any other key, with its line, from the table's
                // declaration (`config::schema::OTLP`).
                _ => {}
            }
        }
        Ok(out)
    }
}

/// The settings of a run: `flag` (`--otlp URL`) first, then the config's endpoint, then
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) and `OTEL_EXPORTER_OTLP_ENDPOINT`;
/// `None` when none is set.
pub fn resolve(
    flag: Option<&str>,
    content: bool,
    config: &ConfigOtlp,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<OtlpSettings>, String> {
    let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let url = if let Some(u) = flag {
        traces_url(u)?
    } else if let Some(u) = &config.endpoint {
        traces_url(u)?
    } else if let Some(u) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        checked(u.trim())?
    } else if let Some(u) = env("OTEL_EXPORTER_OTLP_ENDPOINT") {
        traces_url(&u)?
    } else {
        return Ok(None);
    };
    let protocol = match env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .or_else(|| config.protocol.clone())
        .as_deref()
        .map(str::trim)
    {
        None | Some("http/protobuf") => Protocol::Protobuf,
        Some("http/json") => Protocol::Json,
        Some("grpc") => {
            return Err("OTLP over gRPC is not supported: use http/protobuf (port 4318)".into())
        }
        Some(other) => {
            return Err(format!(
                "unknown OTLP protocol {other:?}: use http/protobuf or http/json"
            ))
        }
    };
    let mut headers: BTreeMap<String, String> = config.headers.clone();
    for var in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Some(v) = env(var) {
            headers.extend(parse_headers(&v).map_err(|e| format!("{var}: {e}"))?);
        }
    }
    Ok(Some(OtlpSettings {
        url,
        protocol,
        headers: headers.into_iter().collect(),
        content,
    }))
}

/// `base` with `/v1/traces` appended (unless it ends with it already).
pub fn traces_url(base: &str) -> Result<String, String> {
    let base = base.trim();
    // The endpoint as given must name a host: `http://` alone would become
    // `http:///v1/traces`, which a URL parser reads as the host `v1`.
    checked(base)?;
    if base.trim_end_matches('/').ends_with("/v1/traces") {
        return checked(base.trim_end_matches('/'));
    }
    checked(&format!("{}/v1/traces", base.trim_end_matches('/')))
}

fn checked(url: &str) -> Result<String, String> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
            Ok(url.to_string())
        }
        Ok(_) => Err(format!(
            "OTLP endpoint {url:?} must be an http:// or https:// URL"
        )),
        Err(e) => Err(format!("OTLP endpoint {url:?} is not a URL: {e}")),
    }
}

/// `k=v,k2=v2` with URL-encoded values (the `OTEL_EXPORTER_OTLP_HEADERS` form).
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for item in text.split(',').filter(|i| !i.trim().is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!("{:?} is not name=value", item.trim()));
        };
        let k = k.trim();
        if k.is_empty() {
            return Err(format!("{:?} has no header name", item.trim()));
        }
        let v = percent_encoding::percent_decode_str(v.trim())
            .decode_utf8()
            .map_err(|e| format!("the value of {k} is not UTF-8 once decoded: {e}"))?;
        out.push((k.to_string(), v.into_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn endpoint_comes_from_the_flag_then_the_config_then_the_environment() {
        let env = env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318")]);
        let cfg = ConfigOtlp {
            endpoint: Some("http://cfg:4318/".into()),
            ..Default::default()
        };
        let flag = resolve(Some("http://flag:4318"), false, &cfg, &env).expect("resolves");
        assert_eq!(flag.expect("resolves").url, "http://flag:4318/v1/traces");
        let c = resolve(None, false, &cfg, &env).expect("resolves");
        assert_eq!(c.expect("resolves").url, "http://cfg:4318/v1/traces");
        let e = resolve(None, false, &ConfigOtlp::default(), &env).expect("resolves");
        assert_eq!(e.expect("resolves").url, "http://env:4318/v1/traces");
        let none = resolve(None, false, &ConfigOtlp::default(), &env_of(&[])).expect("resolves");
        assert!(none.is_none());
        let t = env_of(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom")]);
        let t = resolve(None, false, &ConfigOtlp::default(), &t).expect("resolves");
        assert_eq!(t.expect("resolves").url, "http://t:1/custom");
    }

    #[test]
    fn headers_are_decoded_and_protocol_is_read() {
        let env = env_of(&[
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Basic%20abc%3D, x-a = 1",
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ]);
        let s = resolve(Some("http://h:1"), true, &ConfigOtlp::default(), &env)
            .expect("resolves")
            .expect("resolves");
        assert_eq!(s.protocol, Protocol::Json);
        assert!(s.content);
        assert_eq!(
            s.headers,
            vec![
                ("Authorization".to_string(), "Basic abc=".to_string()),
                ("x-a".to_string(), "1".to_string())
            ]
        );
        assert!(parse_headers("novalue").is_err());
        let grpc = env_of(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
        assert!(resolve(Some("http://h:1"), false, &ConfigOtlp::default(), &grpc).is_err());
        assert!(traces_url("ftp://x").is_err());
    }

    #[test]
    fn the_config_table_is_read_and_checked() {
        let cfg = crate::base::config::Config::parse(
            "[otlp]\nendpoint = \"http://c:4318\"\nheaders = { Authorization = \"Basic x\" }\n",
            None,
        )
        .expect("a valid config");
        let t = ConfigOtlp::from_config(&cfg).expect("reads");
        assert_eq!(t.endpoint.as_deref(), Some("http://c:4318"));
        assert_eq!(
            t.headers.get("Authorization").map(String::as_str),
            Some("Basic x")
        );
        // The loader refuses an unknown key itself, naming it and its line.
        let e = crate::base::config::Config::parse("[otlp]\nurl = \"x\"\n", None)
            .expect_err("unknown key")
            .to_string();
        assert!(e.contains("url") && e.contains("line 2"), "{e}");
    }
}
