//! Skills: the three load levels, resource escapes, the activation rule (cycles, depth),
//! `uses:` ordering and every bad SKILL.md, on skills written into a temporary folder.

use std::path::Path;

use plexus::base::protocol::messages::{LoadLevel, SkillActivationRequest};
use plexus::base::skills::{ActivationRefused, SkillError, SkillLibrary, MAX_SKILL_BYTES};
use plexus::base::tokens::TokenCounter;

/// Writes `skills/NAME/SKILL.md` with the given front matter fields and body.
fn skill(ws: &Path, name: &str, front: &str, body: &str) {
    let dir = ws.join("skills").join(name);
    std::fs::create_dir_all(&dir).expect("skill dir");
    std::fs::write(dir.join("SKILL.md"), format!("---\n{front}---\n{body}")).expect("SKILL.md");
}

/// A skill named `name` using `uses` (a YAML flow list), with a recognisable body.
fn simple(ws: &Path, name: &str, uses: &[&str]) {
    let uses = if uses.is_empty() {
        String::new()
    } else {
        format!("uses: [{}]\n", uses.join(", "))
    };
    skill(
        ws,
        name,
        &format!("name: {name}\ndescription: Skill {name} does {name} things.\n{uses}"),
        &format!("# {name}\n\nBODY-OF-{name}: step one, step two.\n"),
    );
}

fn lib(ws: &Path) -> SkillLibrary {
    SkillLibrary::new(ws, TokenCounter::default())
}

#[test]
fn catalog_lists_front_matter_only() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "beta", &[]);
    simple(ws.path(), "alpha", &["beta"]);
    let lib = lib(ws.path());
    let cat = lib.catalog();
    assert!(cat.errors.is_empty(), "{:?}", cat.errors);
    let names: Vec<&str> = cat.skills.iter().map(|s| s.front.name.as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert!(cat.text.contains("- alpha: Skill alpha does alpha things."));
    assert!(cat.text.contains("- beta: Skill beta does beta things."));
    assert!(!cat.text.contains("BODY-OF"), "{}", cat.text);
    assert_eq!(cat.tokens, TokenCounter::default().count(&cat.text));
    assert!(cat.tokens > 0 && cat.tokens < 100);
    assert_eq!(cat.skills[0].front.uses, ["beta"]);
}

#[test]
fn catalog_of_a_workspace_without_skills_is_empty() {
    let ws = tempfile::tempdir().expect("tempdir");
    let cat = lib(ws.path()).catalog();
    assert!(cat.skills.is_empty() && cat.errors.is_empty());
    assert_eq!((cat.text.as_str(), cat.tokens), ("", 0));
}

#[test]
fn level_one_is_read_once_and_level_two_on_activation() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "alpha", &[]);
    let lib = lib(ws.path());
    assert_eq!(lib.catalog().skills.len(), 1);
    // rewriting the description after level 1 does not change the cached catalog
    skill(
        ws.path(),
        "alpha",
        "name: alpha\ndescription: Changed.\n",
        "NEW BODY\n",
    );
    assert!(lib
        .catalog()
        .text
        .contains("Skill alpha does alpha things."));
    // level 2 reads the file on the first activation, then keeps it
    let a = lib.activate("alpha", None).expect("activate");
    assert_eq!(a.skill.body(), "NEW BODY\n");
    assert!(a.skill.text.starts_with("---\nname: alpha\n"));
    assert_eq!(a.skill.tokens, TokenCounter::default().count(&a.skill.text));
    simple(ws.path(), "alpha", &[]);
    let again = lib.activate("alpha", None).expect("activate");
    assert_eq!(again.skill.body(), "NEW BODY\n");
}

#[test]
fn level_two_returns_the_body() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "alpha", &[]);
    let a = lib(ws.path()).activate("alpha", None).expect("activate");
    assert_eq!(
        a.skill.body(),
        "# alpha\n\nBODY-OF-alpha: step one, step two.\n"
    );
    assert_eq!(a.request.load_level, LoadLevel::Full);
    assert_eq!(a.request.activation_depth, 0);
    assert_eq!(a.request.max_depth, 3);
    assert!(a.request.activation_chain.is_empty());
    assert_eq!(a.chain(), "alpha");
}

#[test]
fn level_three_reads_resources_and_refuses_escapes() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "alpha", &[]);
    simple(ws.path(), "beta", &[]);
    let dir = ws.path().join("skills/alpha");
    std::fs::create_dir_all(dir.join("templates")).expect("dir");
    std::fs::write(dir.join("templates/report.md"), "# Report 报告\n").expect("write");
    std::fs::write(dir.join("notes.txt"), "notes").expect("write");
    std::fs::write(ws.path().join("secret.txt"), "SECRET").expect("write");
    let lib = lib(ws.path());

    let r = lib
        .resource("alpha", "templates/report.md")
        .expect("resource");
    assert_eq!(r.text, "# Report 报告\n");
    assert_eq!(r.tokens, TokenCounter::default().count("# Report 报告\n"));
    assert_eq!(
        lib.resources("alpha").expect("list"),
        ["notes.txt", "templates/report.md"]
    );

    let escape = |name: &str| match lib.resource("alpha", name) {
        Err(SkillError::ResourceEscape { reason, .. }) => reason,
        other => panic!("{name}: expected a refusal, got {other:?}"),
    };
    assert!(escape("../../secret.txt").contains(".."));
    assert!(escape("templates/../../beta/SKILL.md").contains(".."));
    let abs = ws.path().join("secret.txt");
    assert!(escape(abs.to_str().expect("utf-8 path")).contains("absolute"));
    assert!(escape("").contains("usable"));

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(ws.path().join("secret.txt"), dir.join("link.txt"))
            .expect("symlink");
        std::os::unix::fs::symlink(ws.path().join("skills/beta"), dir.join("linkdir"))
            .expect("symlink");
        assert!(escape("link.txt").contains("outside"));
        assert!(escape("linkdir/SKILL.md").contains("outside"));
        // a symlink that stays inside the folder is fine
        std::os::unix::fs::symlink(dir.join("notes.txt"), dir.join("inner.txt")).expect("symlink");
        assert_eq!(
            lib.resource("alpha", "inner.txt").expect("inner").text,
            "notes"
        );
    }
    assert!(matches!(
        lib.resource("alpha", "missing.md"),
        Err(SkillError::ResourceNotFound { .. })
    ));
    assert!(matches!(
        lib.resource("alpha", "templates"),
        Err(SkillError::ResourceNotFound { .. })
    ));
    assert!(matches!(
        lib.resource("../alpha", "notes.txt"),
        Err(SkillError::InvalidName { .. })
    ));
}

#[test]
fn direct_cycle_is_refused_and_named() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "A", &["A"]);
    let lib = lib(ws.path());
    let root = lib.activate("A", None).expect("root");
    let refused = lib.activate("A", Some(&root.request)).expect_err("A → A");
    assert!(matches!(refused, ActivationRefused::Cycle { .. }));
    assert_eq!(refused.chain(), "A → A");
    assert!(refused.to_string().contains("cycle A → A"), "{refused}");

    let tree = lib.activate_with_uses("A").expect("tree");
    assert_eq!(tree.chains(), ["A"]);
    assert_eq!(tree.refusals.len(), 1);
    assert_eq!(tree.refusals[0].chain(), "A → A");
}

#[test]
fn indirect_cycle_is_refused_and_named() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "A", &["B"]);
    simple(ws.path(), "B", &["C"]);
    simple(ws.path(), "C", &["A"]);
    let lib = lib(ws.path());
    let tree = lib.activate_with_uses("A").expect("tree");
    assert_eq!(tree.chains(), ["A", "A → B", "A → B → C"]);
    assert_eq!(tree.refusals.len(), 1);
    let r = &tree.refusals[0];
    assert!(matches!(r, ActivationRefused::Cycle { skill, .. } if skill == "A"));
    assert_eq!(r.chain(), "A → B → C → A");
    assert!(r.to_string().contains("cycle A → B → C → A"), "{r}");
    // the child requests carry depth and chain as the seed describes them
    let c = &tree.activations[2].request;
    assert_eq!((c.activation_depth, c.max_depth), (2, 3));
    assert_eq!(c.activation_chain, ["A", "B"]);
}

#[test]
fn depth_three_is_the_deepest_nesting() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "A", &["B"]);
    simple(ws.path(), "B", &["C"]);
    simple(ws.path(), "C", &["D"]);
    simple(ws.path(), "D", &["E"]);
    simple(ws.path(), "E", &[]);
    let lib = lib(ws.path());
    let tree = lib.activate_with_uses("A").expect("tree");
    // A(0) → B(1) → C(2) → D(3): allowed; E would be at depth 4
    assert_eq!(tree.chains(), ["A", "A → B", "A → B → C", "A → B → C → D"]);
    assert_eq!(tree.activations[3].request.activation_depth, 3);
    assert_eq!(tree.refusals.len(), 1);
    match &tree.refusals[0] {
        ActivationRefused::TooDeep {
            skill,
            depth,
            max_depth,
            chain,
        } => {
            assert_eq!((skill.as_str(), *depth, *max_depth), ("E", 4, 3));
            assert_eq!(chain, "A → B → C → D → E");
        }
        other => panic!("expected TooDeep, got {other:?}"),
    }
    assert!(tree.refusals[0]
        .to_string()
        .contains("depth 4 over the limit 3"));

    // the same rule through `activate` and a parent request from elsewhere (the seed's
    // example request is at depth 1)
    let parent = SkillActivationRequest {
        skill_name: "C".into(),
        activation_id: "act_x".into(),
        load_level: LoadLevel::Full,
        activation_depth: 2,
        max_depth: 3,
        activation_chain: vec!["A".into(), "B".into()],
    };
    let d = lib.activate("D", Some(&parent)).expect("depth 3 allowed");
    assert_eq!(d.request.activation_depth, 3);
    assert_eq!(d.request.activation_chain, ["A", "B", "C"]);
    assert!(matches!(
        lib.activate("E", Some(&d.request)),
        Err(ActivationRefused::TooDeep { depth: 4, .. })
    ));
}

#[test]
fn uses_are_activated_depth_first_in_order() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "root", &["b", "a", "c"]);
    simple(ws.path(), "b", &["b1", "b2"]);
    simple(ws.path(), "b1", &[]);
    simple(ws.path(), "b2", &[]);
    simple(ws.path(), "a", &["ghost"]);
    simple(ws.path(), "c", &["b1"]);
    let lib = lib(ws.path());
    let tree = lib.activate_with_uses("root").expect("tree");
    assert_eq!(
        tree.chains(),
        [
            "root",
            "root → b",
            "root → b → b1",
            "root → b → b2",
            "root → a",
            "root → c",
            "root → c → b1"
        ]
    );
    // an unknown skill in `uses` is reported, the rest goes on
    assert_eq!(tree.refusals.len(), 1);
    assert_eq!(tree.refusals[0].chain(), "root → a → ghost");
    assert!(matches!(
        &tree.refusals[0],
        ActivationRefused::Skill { source, .. } if matches!(**source, SkillError::Unknown { .. })
    ));
    // ids are unique
    let mut ids: Vec<&str> = tree
        .activations
        .iter()
        .map(|a| a.request.activation_id.as_str())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), tree.activations.len());
}

#[test]
fn a_root_that_cannot_be_loaded_is_an_error() {
    let ws = tempfile::tempdir().expect("tempdir");
    let lib = lib(ws.path());
    let err = lib.activate_with_uses("nope").expect_err("unknown");
    assert!(err.to_string().contains("unknown skill `nope`"), "{err}");
    assert!(err.to_string().contains("SKILL.md"), "{err}");
    let err = lib.activate("../etc", None).expect_err("a path");
    assert!(matches!(
        err,
        ActivationRefused::Skill { source, .. } if matches!(*source, SkillError::InvalidName { .. })
    ));
}

/// The error of loading skill `name` written as `text`, at level 1 and at level 2 (both
/// must fail the same way).
fn bad(name: &str, text: &[u8]) -> String {
    let ws = tempfile::tempdir().expect("tempdir");
    let dir = ws.path().join("skills").join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("SKILL.md"), text).expect("write");
    let lib = lib(ws.path());
    let e1 = lib.meta(name).expect_err("level 1 must fail").to_string();
    let e2 = lib.load(name).expect_err("level 2 must fail").to_string();
    assert_eq!(e1, e2);
    let cat = lib.catalog();
    assert!(cat.skills.is_empty());
    assert_eq!(cat.errors.len(), 1);
    assert!(e1.contains(&format!("skills/{name}/SKILL.md")), "{e1}");
    e1
}

#[test]
fn bad_files_are_clear_errors() {
    let e = bad("x", b"# just markdown\n");
    assert!(e.contains("SKILL.md:1: no front matter"), "{e}");
    let e = bad("x", b"");
    assert!(e.contains(":1: no front matter"), "{e}");
    let e = bad("x", b"---\nname: x\ndescription: d\n# never closed\n");
    assert!(e.contains(":1: front matter not closed"), "{e}");
    let e = bad("x", b"---\ndescription: no name\n---\nbody\n");
    assert!(e.contains(":1: the front matter has no `name`"), "{e}");
    let e = bad("x", b"---\nname: x\n---\nbody\n");
    assert!(e.contains("has no `description`"), "{e}");
    let e = bad("x", b"---\nname: x\ndescription: \"\"\n---\n");
    assert!(e.contains(":3: `description` is empty"), "{e}");
    let e = bad("x", b"---\n---\nbody\n");
    assert!(e.contains("empty front matter"), "{e}");
    let e = bad("x", b"---\nname: y\ndescription: d\n---\n");
    assert!(
        e.contains(":2: name `y` differs from the folder name `x`"),
        "{e}"
    );
    let e = bad("x", b"---\nname: x\ndescription: d\nuses: [a, [b]\n---\n");
    assert!(e.contains(":5: malformed YAML"), "{e}");
    assert!(!e.contains("at line"), "{e}");
    let e = bad(
        "x",
        b"---\nname: x\ndescription: d\nbad: : :\n  - oops\n---\n",
    );
    assert!(e.contains(":4: malformed YAML"), "{e}");
    let e = bad("x", b"---\nname: [x]\ndescription: d\n---\n");
    assert!(e.contains(":2: `name` must be a string, not a list"), "{e}");
    let e = bad("x", b"---\n- name\n- description\n---\n");
    assert!(e.contains("must be a mapping"), "{e}");
    let e = bad("x", b"---\nname: x\ndescription: d\nuses: b\n---\n");
    assert!(e.contains(":4: `uses` must be a list"), "{e}");
    let e = bad("x", b"---\nname: x\ndescription: d\nuses: [../etc]\n---\n");
    assert!(e.contains("not a valid skill name"), "{e}");
    let e = bad("x", b"---\nname: x\ndescription: \xff\xfe\n---\n");
    assert!(e.contains(":3: not UTF-8"), "{e}");
    let long = format!(
        "---\nname: x\ndescription: d\n---\n{}",
        "a".repeat(MAX_SKILL_BYTES as usize)
    );
    let e = bad("x", long.as_bytes());
    assert!(e.contains("over the limit of 1048576 bytes"), "{e}");
}

#[test]
fn front_matter_quirks_that_are_fine() {
    let ws = tempfile::tempdir().expect("tempdir");
    let dir = ws.path().join("skills/x");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("SKILL.md"),
        "\u{feff}---\r\nname: x\r\ndescription: >\r\n  Folded\r\n  text.\r\nlicense: MIT\r\n---  \r\nBody\r\n",
    )
    .expect("write");
    let lib = lib(ws.path());
    let m = lib.meta("x").expect("meta");
    assert_eq!(m.front.description, "Folded text.");
    assert!(m.front.uses.is_empty());
    assert_eq!(lib.load("x").expect("load").body(), "Body\r\n");
}

#[test]
fn yaml_bombs_and_deep_nesting_do_not_hang() {
    let mut bomb = String::from("---\nname: x\ndescription: d\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    let mut prev = 'a';
    for c in 'b'..='j' {
        bomb.push_str(&format!(
            "{c}: &{c} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
        ));
        prev = c;
    }
    bomb.push_str("---\n");
    let e = bad("x", bomb.as_bytes());
    assert!(e.contains("malformed YAML"), "{e}");
    let deep = format!(
        "---\nname: x\ndescription: d\nk: {}{}\n---\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let e = bad("x", deep.as_bytes());
    assert!(e.contains("malformed YAML"), "{e}");
}

#[test]
fn front_matter_past_the_level_one_window_is_an_error() {
    let huge = format!(
        "---\nname: x\ndescription: d\nnotes: \"{}\"\n---\nbody\n",
        "n".repeat(70_000)
    );
    let ws = tempfile::tempdir().expect("tempdir");
    let dir = ws.path().join("skills/x");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("SKILL.md"), huge).expect("write");
    let e = lib(ws.path()).meta("x").expect_err("too long").to_string();
    assert!(
        e.contains("not closed by a line `---` within the first 65536 bytes"),
        "{e}"
    );
}

#[test]
fn bad_folder_names_are_reported() {
    let ws = tempfile::tempdir().expect("tempdir");
    simple(ws.path(), "good", &[]);
    let odd = ws.path().join("skills/has space");
    std::fs::create_dir_all(&odd).expect("dir");
    std::fs::write(
        odd.join("SKILL.md"),
        "---\nname: has space\ndescription: d\n---\n",
    )
    .expect("write");
    let cat = lib(ws.path()).catalog();
    assert_eq!(cat.skills.len(), 1);
    assert_eq!(cat.errors.len(), 1);
    assert!(cat.errors[0]
        .to_string()
        .contains("`has space` is not a valid skill name"));
}
