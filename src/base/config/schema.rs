//! What `plexus.toml` may hold, declared once: its tables, each key's type, range, names,
//! default and meaning, and the rules between keys. The parser takes the known tables
//! and keys, and every range, from here; `plexus schema config` turns the same
//! declaration into a JSON Schema.
//!
//! A new table is one entry of [`SECTIONS`]: a table without a reader of its own (like
//! `[prices."model-name"]`) is checked key by key from its declaration when the file
//! loads ([`super::check`]) and kept verbatim in [`super::Config::other`].

use super::providers as p;
use crate::base::ranges::{self as r, NumRange};

/// What a value must be.
pub enum Kind {
    /// A string.
    Str,
    /// A string with more than white space in it.
    Text,
    /// A URL starting with `http://` or `https://`.
    Url,
    /// `true` or `false`.
    Bool,
    /// A number within its range.
    Num(&'static NumRange),
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A table of strings (such as HTTP headers).
    StrTable,
    /// A list of strings (such as a command's arguments).
    StrList,
}

/// A key's default, as the file would write it.
pub enum Default {
    /// A string.
    Str(&'static str),
    /// A whole number.
    Int(i64),
    /// A number.
    Num(f64),
    /// `true` or `false`.
    Bool(bool),
}

/// One key of a table.
pub struct Key {
    /// Its name.
    pub name: &'static str,
    /// What its value must be.
    pub kind: Kind,
    /// Whether the table must have it.
    pub required: bool,
    /// Its value when it is absent (`None`: absent means unset).
    pub default: Option<Default>,
    /// What it is for.
    pub doc: &'static str,
}

/// A key that may be left out.
const fn opt(name: &'static str, kind: Kind, default: Option<Default>, doc: &'static str) -> Key {
    Key {
        name,
        kind,
        required: false,
        default,
        doc,
    }
}

/// A rule between the keys of a table.
pub enum Rule {
    /// Unless `key` is `value`, the keys `required` must be given and every value
    /// check beyond its type applies (else only types and ranges are checked).
    Unless {
        /// The key tested.
        key: &'static str,
        /// The value that lifts the rule.
        value: &'static str,
        /// The keys required otherwise.
        required: &'static [&'static str],
    },
    /// At most one of the two keys.
    Exclusive(&'static str, &'static str),
    /// The first key needs the second.
    Needs(&'static str, &'static str),
}

/// How a top-level table is laid out.
pub enum Layout {
    /// `[name]` with these keys.
    Table(&'static [Key]),
    /// `[name.NAME]` tables, each with these keys and rules; `reserved` names may not
    /// be used.
    Tables {
        /// The keys of each table.
        keys: &'static [Key],
        /// The rules between them.
        rules: &'static [Rule],
        /// Names a table may not have.
        reserved: &'static [&'static str],
    },
    /// `[keys]`: an action of the keymap = a key string or a list of them.
    Keymap,
}

/// A top-level table of the file.
pub struct Section {
    /// Its name.
    pub name: &'static str,
    /// Its keys.
    pub layout: Layout,
    /// What it is for.
    pub doc: &'static str,
}

impl Section {
    /// The key `name` of a [`Layout::Table`] or [`Layout::Tables`].
    pub fn key(&self, name: &str) -> Option<&'static Key> {
        self.keys().iter().find(|k| k.name == name)
    }

    /// The keys of a [`Layout::Table`] or [`Layout::Tables`] (none for the keymap).
    pub fn keys(&self) -> &'static [Key] {
        match self.layout {
            Layout::Table(keys) | Layout::Tables { keys, .. } => keys,
            Layout::Keymap => &[],
        }
    }

    /// `known: a, b, c`, for an error about an unknown key.
    pub fn known(&self) -> String {
        let names: Vec<&str> = self.keys().iter().map(|k| k.name).collect();
        format!("known: {}", names.join(", "))
    }

    /// How the file writes the table: `[ui]`, `[providers.NAME]`.
    pub fn header(&self) -> String {
        match self.layout {
            Layout::Tables { .. } => format!("[{}.NAME]", self.name),
            _ => format!("[{}]", self.name),
        }
    }
}

/// Every top-level table, in the order the docs list them.
pub const SECTIONS: &[Section] = &[UI, KEYS, REVIEW, PROVIDERS, PRICES, OTLP, MCP];

/// The top-level table `name`.
pub fn section(name: &str) -> Option<&'static Section> {
    SECTIONS.iter().find(|s| s.name == name)
}

/// `known tables: [ui], [keys], …`, for an error about an unknown table.
pub fn known_tables() -> String {
    let headers: Vec<String> = SECTIONS.iter().map(Section::header).collect();
    format!("known tables: {}", headers.join(", "))
}

/// `[ui]`.
pub const UI: Section = Section {
    name: "ui",
    layout: Layout::Table(&[opt(
        "theme",
        Kind::Str,
        Some(Default::Str(super::settings::DEFAULT_THEME)),
        "A built-in theme (dark, light, …), a name in <config dir>/themes/, or a path.",
    )]),
    doc: "The terminal UI.",
};

/// `[keys]`.
pub const KEYS: Section = Section {
    name: "keys",
    layout: Layout::Keymap,
    doc: "Key bindings: an action = a key or a list of keys, replacing the action's \
          defaults (q, G, ctrl-c, shift-tab, space, enter, esc, pageup, f1, …).",
};

/// `[review]`.
pub const REVIEW: Section = Section {
    name: "review",
    layout: Layout::Table(&[opt(
        "reviewer",
        Kind::Text,
        None,
        "The name review decisions are recorded under (else the login name).",
    )]),
    doc: "Reviews of tasks waiting for a person's decision.",
};

/// `[prices."MODEL"]`.
pub const PRICES: Section = Section {
    name: "prices",
    layout: Layout::Tables {
        keys: &[
            Key {
                name: "input",
                kind: Kind::Num(&r::PRICE),
                required: true,
                default: None,
                doc: "US dollars per million prompt tokens.",
            },
            Key {
                name: "output",
                kind: Kind::Num(&r::PRICE),
                required: true,
                default: None,
                doc: "US dollars per million output tokens.",
            },
            opt(
                "cached_input",
                Kind::Num(&r::PRICE),
                None,
                "US dollars per million prompt tokens the provider served from its cache \
                 (default: the input price).",
            ),
        ],
        rules: &[],
        reserved: &[],
    },
    doc: "What each model costs, by the model name a provider profile sends (`simulated` \
          for the built-in provider): runs show their cost and may have a money budget \
          (--max-cost). No price is assumed: a model without one shows `—`.",
};

/// `[mcp.NAME]`.
pub const MCP: Section = Section {
    name: "mcp",
    layout: Layout::Tables {
        keys: &[
            Key {
                name: "command",
                kind: Kind::Text,
                required: true,
                default: None,
                doc: "The server's program, started as a child process that speaks MCP on \
                      its standard input and output (a bare name is looked up on PATH).",
            },
            opt("args", Kind::StrList, None, "Its arguments."),
            opt(
                "env",
                Kind::StrTable,
                None,
                "Its environment: these variables only, beside PATH, HOME, LANG and TMPDIR \
                 (no provider key reaches a server unless named here).",
            ),
            opt(
                "cwd",
                Kind::Str,
                None,
                "The folder it starts in (default: the folder plexus was started in).",
            ),
            opt(
                "timeout_s",
                Kind::Num(&r::MCP_TIMEOUT),
                Some(Default::Num(60.0)),
                "Most seconds its start or one call may take; a call past it is cancelled.",
            ),
        ],
        rules: &[],
        reserved: &[],
    },
    doc: "Model Context Protocol servers whose tools plexus can list and call \
          (see docs/mcp.md).",
};

/// `[otlp]`.
pub const OTLP: Section = Section {
    name: "otlp",
    layout: Layout::Table(&[
        opt(
            "endpoint",
            Kind::Url,
            None,
            "The OpenTelemetry collector runs are traced to (OTLP over HTTP; `/v1/traces` is \
             added unless the URL ends with it). `--otlp URL` overrides it.",
        ),
        opt(
            "protocol",
            Kind::OneOf(&["http/protobuf", "http/json"]),
            Some(Default::Str("http/protobuf")),
            "How spans are encoded.",
        ),
        opt(
            "headers",
            Kind::StrTable,
            None,
            "HTTP headers sent with every batch (such as an Authorization header).",
        ),
    ]),
    doc: "Traces sent to an OpenTelemetry collector (see docs/opentelemetry.md).",
};

/// `[providers.NAME]`, in the order of `ProviderSettings`'s fields.
pub const PROVIDERS: Section = Section {
    name: "providers",
    layout: Layout::Tables {
        keys: &[
            Key {
                name: "kind",
                kind: Kind::OneOf(&["openai", "anthropic", "simulated"]),
                required: true,
                default: None,
                doc: "The API spoken: openai (any OpenAI-compatible /chat/completions), \
                      anthropic (/v1/messages) or simulated.",
            },
            opt(
                "base_url",
                Kind::Url,
                None,
                "Endpoint root; openai appends /chat/completions, anthropic /v1/messages.",
            ),
            opt(
                "model",
                Kind::Text,
                None,
                "Model name sent with every call.",
            ),
            opt(
                "api_key_env",
                Kind::Str,
                None,
                "Environment variable holding the API key.",
            ),
            opt(
                "api_key_file",
                Kind::Str,
                None,
                "File holding the API key on its first line (~/ is the home directory).",
            ),
            opt(
                "headers",
                Kind::StrTable,
                None,
                "Extra headers on every call (shown by `plexus providers`: no secrets here).",
            ),
            opt(
                "concurrency",
                Kind::Num(&r::CONCURRENCY),
                Some(Default::Int(p::DEFAULT_CONCURRENCY as i64)),
                "Calls in flight through this profile.",
            ),
            opt(
                "rate_limit_rpm",
                Kind::Num(&r::RATE_LIMIT_RPM),
                Some(Default::Int(0)),
                "Requests per minute (token bucket); 0 is unlimited.",
            ),
            opt(
                "rate_burst",
                Kind::Num(&r::RATE_BURST),
                None,
                "Requests the bucket may release at once (default: one second's worth).",
            ),
            opt(
                "stream",
                Kind::Bool,
                Some(Default::Bool(true)),
                "Stream the answer (SSE); false waits for the whole answer.",
            ),
            opt(
                "connect_timeout_s",
                Kind::Num(&r::CONNECT_TIMEOUT),
                Some(Default::Num(p::DEFAULT_CONNECT_TIMEOUT)),
                "Seconds to open a connection.",
            ),
            opt(
                "idle_timeout_s",
                Kind::Num(&r::IDLE_TIMEOUT),
                Some(Default::Num(p::DEFAULT_IDLE_TIMEOUT)),
                "Seconds a stream may stay silent before the call ends as a timeout (E004).",
            ),
            opt(
                "max_response_bytes",
                Kind::Num(&r::MAX_RESPONSE_BYTES),
                Some(Default::Int(p::DEFAULT_MAX_RESPONSE as i64)),
                "Largest answer accepted; past it the call fails (E008).",
            ),
            opt(
                "max_tokens_param",
                Kind::OneOf(p::MAX_TOKENS_PARAMS),
                Some(Default::Str(p::DEFAULT_MAX_TOKENS_PARAM)),
                "openai only: max_completion_tokens for OpenAI's reasoning models.",
            ),
            opt(
                "anthropic_version",
                Kind::Str,
                Some(Default::Str(p::DEFAULT_ANTHROPIC_VERSION)),
                "anthropic only: the anthropic-version header.",
            ),
            opt(
                "thinking_budget",
                Kind::Num(&r::THINKING_BUDGET),
                Some(Default::Int(0)),
                "Anthropic extended thinking budget in tokens; 0 is off.",
            ),
            opt(
                "embedding_model",
                Kind::Text,
                None,
                "Debates compare positions through this model of an OpenAI-compatible \
                 /embeddings endpoint instead of the built-in embedding.",
            ),
            opt(
                "moderation_model",
                Kind::Text,
                None,
                "Every debate output also passes this model of an OpenAI-compatible \
                 /moderations endpoint at base_url.",
            ),
            opt(
                "embedding_base_url",
                Kind::Url,
                None,
                "Where the embeddings endpoint is, when not base_url (/embeddings is appended).",
            ),
            opt(
                "structured_output",
                Kind::OneOf(p::StructuredOutput::NAMES),
                Some(Default::Str("auto")),
                "How answers with a shape are held to their JSON Schema: auto (by kind, \
                 falling back once per form the server refuses), json_schema, json_object, \
                 guided_json, ollama_format, tool (anthropic) or off.",
            ),
            opt(
                "timeout_s",
                Kind::Num(&r::CALL_TIMEOUT),
                None,
                "Seconds a whole call may take (tasks, debate turns, judges); replaces the \
                 plan's and the debate's timeouts on this profile.",
            ),
            opt(
                "first_token_timeout_s",
                Kind::Num(&r::FIRST_TOKEN_TIMEOUT),
                None,
                "Seconds to the first byte of an answer (default: idle_timeout_s).",
            ),
        ],
        rules: &[
            Rule::Unless {
                key: "kind",
                value: "simulated",
                required: &["base_url", "model"],
            },
            Rule::Exclusive("api_key_env", "api_key_file"),
            Rule::Needs("embedding_base_url", "embedding_model"),
        ],
        reserved: &["simulated"],
    },
    doc: "Provider profiles: run on one with --provider NAME.",
};
