//! Seed 001 §4.3, the status table, case by case, through `decide_status`.
//!
//! | status    | condition                                                              |
//! |-----------|------------------------------------------------------------------------|
//! | `success` | `atoms_generated > 0` and `avg_quality_score >= 0.7` and no errors     |
//! | `partial` | `atoms_generated > 0` and (`avg_quality_score < 0.7` or errors present) |
//! | `failed`  | `atoms_generated == 0` or an unrecoverable error (§8.1: E006–E008)     |
//! | `timeout` | `execution_time_ms > timeout_seconds * 1000`                           |

use plexus::base::protocol::{ErrorCode, ErrorInfo, InvocationStatus};
use plexus::model::gate::status::decide_status;

const TIMEOUT_S: f64 = 300.0;
/// Well within the limit.
const FAST_MS: u64 = 1_000;

fn err(code: ErrorCode) -> ErrorInfo {
    ErrorInfo::new(code, format!("test error {code}"))
}

#[test]
fn success_with_atoms_high_average_and_no_errors() {
    assert_eq!(
        decide_status(3, 0.85, &[], FAST_MS, TIMEOUT_S),
        InvocationStatus::Success
    );
    assert_eq!(
        decide_status(1, 1.0, &[], FAST_MS, TIMEOUT_S),
        InvocationStatus::Success
    );
}

#[test]
fn success_at_exactly_the_average_threshold() {
    // `avg_quality_score >= 0.7`: the boundary itself is a success.
    assert_eq!(
        decide_status(2, 0.7, &[], FAST_MS, TIMEOUT_S),
        InvocationStatus::Success
    );
}

#[test]
fn partial_when_average_is_below_threshold() {
    assert_eq!(
        decide_status(2, 0.69, &[], FAST_MS, TIMEOUT_S),
        InvocationStatus::Partial
    );
    assert_eq!(
        decide_status(2, 0.699_999, &[], FAST_MS, TIMEOUT_S),
        InvocationStatus::Partial
    );
    assert_eq!(
        decide_status(5, 0.0, &[], FAST_MS, TIMEOUT_S),
        InvocationStatus::Partial
    );
}

#[test]
fn partial_when_a_recoverable_error_is_present_despite_high_average() {
    let errors = [err(ErrorCode::E005)];
    assert!(errors[0].recoverable, "E005 is recoverable (§8.1)");
    assert_eq!(
        decide_status(3, 0.95, &errors, FAST_MS, TIMEOUT_S),
        InvocationStatus::Partial
    );
}

#[test]
fn partial_for_every_recoverable_code() {
    for code in [
        ErrorCode::E001,
        ErrorCode::E002,
        ErrorCode::E003,
        ErrorCode::E004,
        ErrorCode::E005,
    ] {
        let errors = [err(code)];
        assert!(errors[0].recoverable, "{code} is recoverable (§8.1)");
        assert_eq!(
            decide_status(3, 0.9, &errors, FAST_MS, TIMEOUT_S),
            InvocationStatus::Partial,
            "{code}"
        );
    }
}

#[test]
fn failed_with_zero_atoms_even_with_a_high_average() {
    assert_eq!(
        decide_status(0, 0.9, &[], FAST_MS, TIMEOUT_S),
        InvocationStatus::Failed
    );
    assert_eq!(
        decide_status(0, 0.0, &[], FAST_MS, TIMEOUT_S),
        InvocationStatus::Failed
    );
    // zero atoms with only a recoverable error is still failed, not partial
    assert_eq!(
        decide_status(0, 0.9, &[err(ErrorCode::E002)], FAST_MS, TIMEOUT_S),
        InvocationStatus::Failed
    );
}

#[test]
fn failed_with_an_unrecoverable_error_even_with_atoms_and_high_average() {
    for code in [ErrorCode::E006, ErrorCode::E007, ErrorCode::E008] {
        let errors = [err(code)];
        assert!(!errors[0].recoverable, "{code} is not recoverable (§8.1)");
        assert_eq!(
            decide_status(4, 0.95, &errors, FAST_MS, TIMEOUT_S),
            InvocationStatus::Failed,
            "{code}"
        );
    }
}

#[test]
fn failed_when_an_unrecoverable_error_is_mixed_with_recoverable_ones() {
    let errors = [
        err(ErrorCode::E005),
        err(ErrorCode::E007),
        err(ErrorCode::E002),
    ];
    assert_eq!(
        decide_status(4, 0.95, &errors, FAST_MS, TIMEOUT_S),
        InvocationStatus::Failed
    );
    let errors = [err(ErrorCode::E001), err(ErrorCode::E008)];
    assert_eq!(
        decide_status(1, 0.2, &errors, FAST_MS, TIMEOUT_S),
        InvocationStatus::Failed
    );
}

#[test]
fn timeout_when_execution_time_exceeds_the_limit() {
    assert_eq!(
        decide_status(3, 0.9, &[], 300_001, 300.0),
        InvocationStatus::Timeout
    );
    assert_eq!(
        decide_status(3, 0.9, &[], 45_231, 45.23),
        InvocationStatus::Timeout
    );
}

#[test]
fn not_timeout_when_execution_time_equals_the_limit() {
    // `>` and not `>=`: exactly timeout_seconds × 1000 is within the limit.
    assert_eq!(
        decide_status(3, 0.9, &[], 300_000, 300.0),
        InvocationStatus::Success
    );
    assert_eq!(
        decide_status(3, 0.5, &[], 120_000, 120.0),
        InvocationStatus::Partial
    );
    assert_eq!(
        decide_status(0, 0.0, &[], 60_000, 60.0),
        InvocationStatus::Failed
    );
}

#[test]
fn timeout_takes_precedence_over_failed() {
    // zero atoms
    assert_eq!(
        decide_status(0, 0.0, &[], 300_500, 300.0),
        InvocationStatus::Timeout
    );
    // unrecoverable errors
    assert_eq!(
        decide_status(0, 0.0, &[err(ErrorCode::E008)], 600_000, 300.0),
        InvocationStatus::Timeout
    );
    assert_eq!(
        decide_status(2, 0.9, &[err(ErrorCode::E007)], 301_000, 300.0),
        InvocationStatus::Timeout
    );
}

#[test]
fn timeout_takes_precedence_over_partial_and_success() {
    assert_eq!(
        decide_status(2, 0.4, &[err(ErrorCode::E004)], 10_001, 10.0),
        InvocationStatus::Timeout
    );
    assert_eq!(
        decide_status(2, 0.99, &[], 10_001, 10.0),
        InvocationStatus::Timeout
    );
}
