//! The known name nearest to a misspelt one (`quality_treshold` → `quality_threshold`),
//! for errors about unknown keys and values; and the same suggestion added to serde's
//! own "unknown field" and "unknown variant" messages.

/// The name of `known` nearest to `word`, when one is near enough to be a typo of it:
/// at most one edit (a transposition counts as one) for short names, a third of the
/// name's length for long ones; a different case alone always counts.
pub fn nearest<'a, I>(word: &str, known: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let lower = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(1);
    known
        .into_iter()
        .filter(|k| *k != word)
        .map(|k| (strsim::damerau_levenshtein(&lower, &k.to_lowercase()), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `; did you mean `NAME`?` for `word` among `known`, or nothing.
pub fn did_you_mean<'a, I>(word: &str, known: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    nearest(word, known)
        .map(|k| format!("; did you mean `{k}`?"))
        .unwrap_or_default()
}

/// serde's message with the nearest known name suggested, when it is about an unknown
/// field or variant: `unknown field `mdoe`, expected one of `mode`, `max_tokens`` gets
/// `; did you mean `mode`?`. Other messages are returned as they are.
pub fn serde_message(message: &str) -> String {
    let Some((word, known)) = unknown_and_known(message) else {
        return message.to_string();
    };
    let hint = did_you_mean(word, known.iter().copied());
    if hint.is_empty() {
        return message.to_string();
    }
    // The hint goes after the list of names, before serde's place (" at line …").
    match message.find(" at line ") {
        Some(at) => format!("{}{hint}{}", &message[..at], &message[at..]),
        None => format!("{message}{hint}"),
    }
}

/// The unknown name and the known ones of a serde message.
fn unknown_and_known(message: &str) -> Option<(&str, Vec<&str>)> {
    let rest = message
        .find("unknown field `")
        .map(|i| &message[i + "unknown field `".len()..])
        .or_else(|| {
            message
                .find("unknown variant `")
                .map(|i| &message[i + "unknown variant `".len()..])
        })?;
    let end = rest.find('`')?;
    let word = &rest[..end];
    let list = &rest[end + 1..];
    let list = list.split(" at line ").next().unwrap_or(list);
    // The names are the back-quoted words after "expected".
    let list = &list[list.find("expected")?..];
    let known: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
    (!known.is_empty()).then_some((word, known))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_of_one_or_two_edits_find_their_name() {
        let keys = [
            "atom_type",
            "required_fields",
            "quality_threshold",
            "max_atoms",
        ];
        assert_eq!(nearest("quality_treshold", keys), Some("quality_threshold"));
        assert_eq!(nearest("max_atom", keys), Some("max_atoms"));
        assert_eq!(nearest("Max_Atoms", keys), Some("max_atoms"));
        assert_eq!(
            nearest("transfrom", ["path", "transform"]),
            Some("transform")
        );
        assert_eq!(nearest("mdoe", ["mode", "max_tokens"]), Some("mode"));
    }

    #[test]
    fn a_name_far_from_every_known_one_gets_no_suggestion() {
        assert_eq!(nearest("colour", ["mode", "max_tokens"]), None);
        assert_eq!(nearest("x", ["mode"]), None);
        assert_eq!(did_you_mean("banana", ["mode"]), "");
    }

    #[test]
    fn serde_messages_about_unknown_names_get_the_suggestion_before_the_place() {
        assert_eq!(
            serde_message(
                "unknown field `epoch`, expected one of `name`, `epochs`, `reducer` at line 3 column 9"
            ),
            "unknown field `epoch`, expected one of `name`, `epochs`, `reducer`; did you mean `epochs`? at line 3 column 9"
        );
        assert_eq!(
            serde_message("unknown variant `exakt`, expected `exact` or `regex`"),
            "unknown variant `exakt`, expected `exact` or `regex`; did you mean `exact`?"
        );
        assert_eq!(
            serde_message("missing field `name`"),
            "missing field `name`"
        );
        assert_eq!(
            serde_message("unknown field `zzzzzz`, expected `name`"),
            "unknown field `zzzzzz`, expected `name`"
        );
    }
}
