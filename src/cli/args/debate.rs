//! Options of `plexus debate` and `plexus serve`.

use clap::{Args, ValueEnum};

use super::options::{OtlpOpts, SimOpts, ThemeOpt};

/// How `plexus debate` prints the session's events.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventsFormat {
    /// The front-end stream: `data: {json}` lines, ending with `data: [DONE]`.
    Sse,
}

/// The host's thresholds and the agents' limits.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Debate options")]
pub struct DebateOpts {
    /// Most rounds (1 to 5).
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=5))]
    pub max_rounds: u32,
    /// Mean similarity above which the host converges.
    #[arg(long, value_name = "X", default_value_t = 0.90)]
    pub converge_above: f64,
    /// Mean similarity above which the host continues; at or below it, it forces
    /// opposition.
    #[arg(long, value_name = "X", default_value_t = 0.70)]
    pub continue_above: f64,
    /// Self-similarity above which an agent counts as unchanged (two such rounds in a
    /// row get it an update command).
    #[arg(long, value_name = "X", default_value_t = 0.98)]
    pub stubborn_above: f64,
    /// Seconds an agent has for one answer before it is skipped [default: the
    /// profile's `timeout_s`, else 300].
    #[arg(long, value_name = "SECS")]
    pub agent_timeout: Option<f64>,
    /// Divide every retry delay of a failing provider by this (1 = the protocol's
    /// backoff; handy for trying failures without waiting).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = super::options::divisor())]
    pub retry_delay_div: u64,
    /// IANA time zone the agents plan dates in.
    #[arg(
        long,
        value_name = "ZONE",
        default_value = "UTC",
        env = "PLEXUS_TIMEZONE"
    )]
    pub timezone: String,
}

/// Options of `plexus debate`.
#[derive(Args, Debug, Clone)]
pub struct DebateArgs {
    /// The question or goal to debate, e.g. "Plan three months of IELTS preparation".
    pub question: String,
    /// Print the session's events on stdout in this format (no terminal UI).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub events: Option<EventsFormat>,
    #[command(flatten)]
    pub debate: DebateOpts,
    /// Provider profile: `simulated` (built in, offline) or a `[providers.NAME]` of
    /// plexus.toml.
    #[arg(
        long,
        env = "PLEXUS_PROVIDER",
        value_name = "NAME",
        help_heading = "Session options"
    )]
    pub provider: Option<String>,
    /// No terminal UI: progress on stderr, the report on stdout.
    #[arg(long, help_heading = "Session options")]
    pub headless: bool,
    #[command(flatten)]
    pub theme: ThemeOpt,
    #[command(flatten)]
    pub sim: SimOpts,
    #[command(flatten)]
    pub otlp: OtlpOpts,
}

/// Options of `plexus serve`.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Port to listen on (0 picks a free one and prints it).
    #[arg(long, value_name = "N", default_value_t = 8080)]
    pub port: u16,
    /// Address to listen on; anything but a loopback address exposes the sessions to
    /// the network and needs --token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Let pages of this origin call from a browser, e.g. `https://app.example.com`
    /// (repeatable); other origins are refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN", value_parser = origin)]
    pub allow_origin: Vec<String>,
    /// Require `Authorization: Bearer TOKEN` on every request (needed when --host is not
    /// a loopback address).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "PLEXUS_SERVE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    #[command(flatten)]
    pub debate: DebateOpts,
    /// Provider profile the sessions run on.
    #[arg(
        long,
        env = "PLEXUS_PROVIDER",
        value_name = "NAME",
        help_heading = "Session options"
    )]
    pub provider: Option<String>,
    #[command(flatten)]
    pub sim: SimOpts,
}

/// An `--allow-origin` value as browsers spell an origin: `scheme://host[:port]`,
/// lower-cased, without a default port or a trailing slash.
pub fn origin(s: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(s.trim()).map_err(|e| {
        format!("{s:?} is not an origin ({e}); write it as a browser sends it, e.g. https://app.example.com")
    })?;
    if !matches!(url.scheme(), "http" | "https")
        || url.host_str().is_none()
        || !url.username().is_empty()
        || url.password().is_some()
        || url.path() != "/"
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(format!(
            "{s:?} is not an origin: write only the scheme, host and port, e.g. https://app.example.com or http://localhost:3000"
        ));
    }
    Ok(url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::origin;

    #[test]
    fn origins_are_spelled_as_browsers_send_them() {
        assert_eq!(
            origin("https://App.Example.com/").as_deref(),
            Ok("https://app.example.com")
        );
        assert_eq!(
            origin("https://a.example:443").as_deref(),
            Ok("https://a.example")
        );
        assert_eq!(
            origin("http://localhost:3000").as_deref(),
            Ok("http://localhost:3000")
        );
        for bad in [
            "app.example.com",
            "https://a.example/app",
            "ftp://a.example",
            "*",
            "null",
        ] {
            assert!(origin(bad).is_err(), "{bad}");
        }
    }
}
