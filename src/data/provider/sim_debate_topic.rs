//! What the simulated debate argues about, chosen from the question's words: studying
//! for an exam, changing a software system, or any other plan (a launch, a move, an
//! event). Each kind has the planner's reasons, the critic's concerns with the fixes it
//! suggests, the assumptions both make, and what the closing turns fear; the question
//! itself is quoted in the conclusions, the plan and the report.

/// The words of one kind of question.
pub struct Topic {
    /// The planner's own reasons.
    pub reasons: [&'static str; 3],
    /// The critic's concerns: (issue, the solution it suggests, severity).
    pub concerns: [(&'static str, &'static str, &'static str); 3],
    /// The planner's assumptions (the first is changed on an update command to
    /// `updated`).
    pub assumptions: [&'static str; 2],
    /// The planner's first assumption after an update command.
    pub updated: &'static str,
    /// The critic's assumptions.
    pub critic_assumes: [&'static str; 2],
    /// What the planner's conclusion adds once it adopted suggestions.
    pub adopted: &'static str,
    /// The devil's advocate's reasons.
    pub against: [&'static str; 3],
    /// The planner's closing: (uncertainty, worst case).
    pub planner_closing: (&'static str, &'static str),
    /// The critic's closing: (uncertainty, worst case).
    pub critic_closing: (&'static str, &'static str),
    /// Titles of the plan's three tasks (groundwork, core work, rehearsal).
    pub tasks: [&'static str; 3],
}

static STUDY: Topic = Topic {
    reasons: [
        "lay the groundwork in the first weeks",
        "train the core skills side by side",
        "finish with full rehearsals under real conditions",
    ],
    concerns: [
        (
            "practice time is too short",
            "add two timed practice sessions every week",
            "high",
        ),
        (
            "progress checks are too rare",
            "hold a full mock test every week",
            "medium",
        ),
        (
            "no feedback loop on weak areas",
            "review every mistake after each mock test",
            "medium",
        ),
    ],
    assumptions: ["at least two hours a day", "a basic level to start from"],
    updated: "ninety minutes a day on working days",
    critic_assumes: [
        "two hours a day are really available",
        "the learner keeps to a schedule",
    ],
    adopted: "with weekly practice and mock tests",
    against: [
        "fixed phases ignore how progress really goes",
        "deadlines set today will be wrong within a month",
        "a short weekly review beats a long schedule",
    ],
    planner_closing: (
        "whether two hours a day are really available",
        "the first phase runs two weeks late and squeezes the rehearsal",
    ),
    critic_closing: (
        "whether the mock tests are scored the way the real exam is",
        "illness in the last two weeks leaves no time to rehearse",
    ),
    tasks: [
        "groundwork and basics",
        "core skills, side by side",
        "full rehearsals under real conditions",
    ],
};

static SOFTWARE: Topic = Topic {
    reasons: [
        "map what exists before changing anything",
        "move one part at a time behind a switch",
        "finish with a rehearsal of the cut-over",
    ],
    concerns: [
        (
            "each step is tested too little",
            "run the full test suite against every step",
            "high",
        ),
        (
            "nobody sees problems before users do",
            "watch errors and latency on a dashboard from day one",
            "medium",
        ),
        (
            "there is no way back when a step fails",
            "keep a tested rollback for every step",
            "medium",
        ),
    ],
    assumptions: [
        "the team has two days a week for it",
        "the current system keeps running meanwhile",
    ],
    updated: "one day a week beside the daily work",
    critic_assumes: [
        "two days a week are really free for it",
        "the test data looks like production",
    ],
    adopted: "with tested steps and a way back",
    against: [
        "a fixed schedule hides what the first step teaches",
        "estimates for old systems are wrong within a month",
        "one small step a week beats a big plan",
    ],
    planner_closing: (
        "whether two days a week are really free for it",
        "the first phase runs two weeks late and squeezes the rehearsal",
    ),
    critic_closing: (
        "whether the test data is close enough to production",
        "the cut-over fails late and leaves no time to rehearse the rollback",
    ),
    tasks: [
        "inventory of what exists",
        "one part at a time, behind a switch",
        "cut-over rehearsals on a copy",
    ],
};

static GENERAL: Topic = Topic {
    reasons: [
        "lay the groundwork in the first weeks",
        "work on the main parts side by side",
        "finish with a full rehearsal before the date",
    ],
    concerns: [
        (
            "too little time is set aside for the work",
            "block two fixed working sessions every week",
            "high",
        ),
        (
            "progress is checked too rarely",
            "hold a short review at the end of every week",
            "medium",
        ),
        (
            "nobody asks the people it is for",
            "ask them for feedback after each milestone",
            "medium",
        ),
    ],
    assumptions: [
        "a few hours a week are free for it",
        "the goal does not change midway",
    ],
    updated: "one fixed afternoon a week",
    critic_assumes: [
        "a few hours a week are really free",
        "everyone involved keeps to the schedule",
    ],
    adopted: "with fixed weekly sessions and reviews",
    against: [
        "fixed phases ignore how the work really goes",
        "deadlines set today will be wrong within a month",
        "a short weekly review beats a long schedule",
    ],
    planner_closing: (
        "whether a few hours a week are really free",
        "the first phase runs two weeks late and squeezes the rehearsal",
    ),
    critic_closing: (
        "whether the people it is for want what is planned",
        "a key person drops out in the last two weeks and leaves no time to rehearse",
    ),
    tasks: [
        "groundwork and first decisions",
        "the main parts, side by side",
        "a full rehearsal before the date",
    ],
};

/// Words that make a question one about studying.
const STUDY_WORDS: [&str; 14] = [
    "exam", "ielts", "toefl", "gre", "study", "studying", "learn", "learning", "course",
    "revision", "test", "学习", "考试", "备考",
];

/// Words that make a question one about a software system.
const SOFTWARE_WORDS: [&str; 18] = [
    "migrate",
    "migration",
    "database",
    "postgres",
    "mysql",
    "rust",
    "service",
    "services",
    "code",
    "deploy",
    "api",
    "server",
    "software",
    "app",
    "refactor",
    "rewrite",
    "cloud",
    "kubernetes",
];

/// The kind of question `q` is, by its words.
pub fn topic_of(q: &str) -> &'static Topic {
    let lower = q.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |list: &[&str]| {
        list.iter()
            .any(|k| words.contains(k) || (!k.is_ascii() && lower.contains(k)))
    };
    if has(&STUDY_WORDS) {
        &STUDY
    } else if has(&SOFTWARE_WORDS) {
        &SOFTWARE
    } else {
        &GENERAL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_of_the_question_choose_what_is_argued() {
        assert!(std::ptr::eq(
            topic_of("Plan three months of IELTS preparation"),
            &STUDY
        ));
        assert!(std::ptr::eq(topic_of("我想备考雅思"), &STUDY));
        assert!(std::ptr::eq(
            topic_of("How should we migrate the billing database to Postgres?"),
            &SOFTWARE
        ));
        assert!(std::ptr::eq(topic_of("Plan a product launch"), &GENERAL));
        // A word inside another does not count: "latest" is no "test".
        assert!(std::ptr::eq(topic_of("Plan the latest party"), &GENERAL));
    }
}
