//! `compare_positions`: the built-in embedding, the matrix and its summary, the cache by
//! text, the keyword fallback, and an OpenAI-compatible embeddings endpoint (a local
//! mock server) that agrees with the built-in one — or fails, and says why.

use std::sync::Arc;

use plexus::data::provider::ProviderProfile;
use plexus::dev::mock_server::{MockConfig, MockServer};
use plexus::features::debate::embed_http::{parse, HttpEmbedder};
use plexus::features::debate::similarity::{keyword_similarity, Embedder, PositionComparer};
use serde_json::json;

fn texts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

async fn mean(a: &str, b: &str) -> f64 {
    PositionComparer::builtin()
        .compare(&texts(&[a, b]))
        .await
        .expect("compares")
        .data
        .mean_similarity
}

#[tokio::test]
async fn identical_positions_score_one_and_unrelated_ones_low() {
    let plan = "Adopt a three-phase plan\nlay the groundwork first\nfinish with mock tests";
    assert_eq!(mean(plan, plan).await, 1.0);
    let other = "Buy a faster database server\nmigrate on a weekend";
    assert!(mean(plan, other).await < 0.3, "{}", mean(plan, other).await);
    let close = "Adopt a three-phase plan\nlay the groundwork first\nfinish with weekly mock tests";
    let s = mean(plan, close).await;
    assert!(s > 0.8 && s < 1.0, "{s}");
}

#[tokio::test]
async fn chinese_positions_that_share_phrases_score_higher() {
    let a = "采用3个月阶段式备考方案\n基础词汇积累需要6周\n最后4周密集模考";
    let b = "采用阶段式备考方案但增加写作训练\n基础词汇积累需要6周";
    let c = "先买一台更快的数据库服务器\n周末迁移";
    let (ab, ac) = (mean(a, b).await, mean(a, c).await);
    assert!(ab > ac + 0.3, "shared {ab} vs unrelated {ac}");
}

#[tokio::test]
async fn the_matrix_is_symmetric_with_its_mean_and_least_similar_pair() {
    let t = texts(&[
        "three phases groundwork rehearsal",
        "three phases groundwork rehearsal practice",
        "hire a tutor instead",
    ]);
    let d = PositionComparer::builtin()
        .compare(&t)
        .await
        .expect("compares")
        .data;
    let m = &d.similarity_matrix;
    for (i, row) in m.iter().enumerate() {
        assert_eq!(row[i], 1.0);
        for (j, x) in row.iter().enumerate() {
            assert_eq!(*x, m[j][i]);
        }
    }
    let pairs = [m[0][1], m[0][2], m[1][2]];
    let want = (pairs.iter().sum::<f64>() / 3.0 * 10_000.0).round() / 10_000.0;
    assert!(
        (d.mean_similarity - want).abs() < 1e-4,
        "{} vs {want}",
        d.mean_similarity
    );
    let min = pairs.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(d.most_different_similarity, min);
    let [i, j] = d.most_different_pair;
    assert_eq!(m[i][j], min);
    assert!(
        d.most_different_pair.contains(&2),
        "the tutor is the odd one out"
    );
    assert_eq!(d.embeddings.len(), 3);
    assert_eq!(d.embeddings[0].len(), 768);
}

#[tokio::test]
async fn embeddings_are_cached_by_text() {
    let c = PositionComparer::builtin();
    let t = texts(&["a plan of three phases", "a plan of four phases"]);
    let first = c.compare(&t).await.expect("compares");
    assert_eq!((first.embedded, first.cached), (2, 0));
    let again = c.compare(&t).await.expect("compares");
    assert_eq!((again.embedded, again.cached), (0, 2));
    assert_eq!(again.data, first.data);
    let changed = c
        .compare(&texts(&["a plan of three phases", "a plan of five phases"]))
        .await
        .expect("compares");
    assert_eq!(
        (changed.embedded, changed.cached),
        (1, 1),
        "only the new output is embedded"
    );
}

#[test]
fn keyword_similarity_is_the_overlap_of_words() {
    let d = keyword_similarity(&texts(&["alpha beta gamma", "alpha beta delta"]));
    // {alpha, beta} shared of {alpha, beta, gamma, delta}.
    assert_eq!(d.similarity_matrix[0][1], 0.5);
    assert_eq!(d.mean_similarity, 0.5);
    assert!(d.embeddings.is_empty());
    assert_eq!(
        keyword_similarity(&texts(&["xx yy", "xx yy"])).mean_similarity,
        1.0
    );
}

fn profile(base: &str, model: &str) -> ProviderProfile {
    let mut p = ProviderProfile::simulated();
    p.name = "local".into();
    p.kind = plexus::data::provider::ProviderKind::Openai;
    p.base_url = base.into();
    p.model = "m".into();
    p.embedding_model = Some(model.into());
    p
}

#[tokio::test]
async fn an_embeddings_endpoint_agrees_with_the_built_in_embedding() {
    let server = MockServer::start(MockConfig::default(), 0, 1).expect("mock server");
    let e = HttpEmbedder::for_profile(&profile(&format!("{}/v1", server.url()), "mock-embedding"))
        .expect("builds")
        .expect("an embedding model is set");
    assert_eq!(e.name(), "endpoint:local/mock-embedding");
    let t = texts(&["三阶段备考方案", "three phases of study", "hire a tutor"]);
    let over_http = PositionComparer::new(Arc::new(e))
        .compare(&t)
        .await
        .expect("compares");
    let local = PositionComparer::builtin()
        .compare(&t)
        .await
        .expect("compares");
    assert_eq!(
        over_http.data.similarity_matrix,
        local.data.similarity_matrix
    );
    assert!(server.seen().iter().any(|r| r.path == "/v1/embeddings"));
    // No model, no endpoint.
    let mut p = profile("http://127.0.0.1:9", "x");
    p.embedding_model = None;
    assert!(HttpEmbedder::for_profile(&p).expect("builds").is_none());
}

#[tokio::test]
async fn a_failing_endpoint_is_an_error_the_session_can_fall_back_from() {
    let server = MockServer::start(MockConfig::default(), 0, 1).expect("mock server");
    let e = HttpEmbedder::for_profile(&profile(&format!("{}/v1", server.url()), "fail-embeddings"))
        .expect("builds")
        .expect("set");
    let err = e.embed(&texts(&["a"])).await.expect_err("fails");
    assert!(
        err.0.contains("HTTP 500") && err.0.contains("backend down"),
        "{err}"
    );
    // Nothing listening.
    let e = HttpEmbedder::for_profile(&profile("http://127.0.0.1:9/v1", "m"))
        .expect("builds")
        .expect("set");
    assert!(e.embed(&texts(&["a"])).await.is_err());
}

#[test]
fn malformed_answers_are_named() {
    let ok = json!({"data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]});
    assert_eq!(
        parse(&ok, 2).expect("parses"),
        vec![vec![1.0, 0.0], vec![0.0, 1.0]],
        "by index"
    );
    let err = |v: serde_json::Value, n: usize| parse(&v, n).expect_err("refused");
    assert!(
        err(json!({"data": [{"embedding": [1.0]}]}), 2).contains("asked for 2 embeddings, got 1")
    );
    assert!(err(json!({"data": [{"embedding": [1.0, "x"]}]}), 1).contains("not a number"));
    assert!(err(json!({"nope": 1}), 1).contains("no `data`"));
    assert!(err(
        json!({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]}),
        2
    )
    .contains("different lengths"));
    assert!(err(json!({"data": [{"index": 5, "embedding": [1.0]}]}), 1).contains("out of range"));
}

#[tokio::test]
async fn the_key_never_appears_in_an_embedding_error() {
    let key = "sk-test-0123456789abcdef0123456789";
    // A server that echoes the key it was given at the start of its 401.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        if let Ok((mut s, _)) = listener.accept() {
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let given = req
                .lines()
                .find_map(|l| {
                    l.strip_prefix("authorization: Bearer ")
                        .or_else(|| l.strip_prefix("Authorization: Bearer "))
                })
                .unwrap_or("none")
                .to_string();
            let body = format!("{{\"error\": \"bad key {given}\"}}");
            let _ = write!(
                s,
                "HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let mut p = profile(&format!("http://127.0.0.1:{port}/v1"), "m");
    let var = "PLEXUS_TEST_EMBEDDING_KEY";
    std::env::set_var(var, key);
    p.api_key_env = Some(var.into());
    let e = HttpEmbedder::for_profile(&p).expect("builds").expect("set");
    let err = e.embed(&texts(&["a"])).await.expect_err("refused");
    assert!(err.0.contains("HTTP 401"), "{err}");
    assert!(
        err.0.contains("bad key"),
        "the server's words are kept: {err}"
    );
    assert!(!err.0.contains(key), "the key leaked: {err}");
    assert!(
        err.0.contains("bad key [redacted]"),
        "the key was echoed and redacted: {err}"
    );
}
