//! The checks of input several API modules share: a name's shape, a quota's limits.

use store::Quota;

use crate::error::ApiError;

/// Names are shown on leaderboards and in messages: bounded, on one line.
pub(crate) fn check_name(field: &str, name: &str) -> Result<(), ApiError> {
    if name.trim().is_empty() {
        return Err(ApiError::invalid(format!("{field} is empty")));
    }
    if name.chars().count() > 100 {
        return Err(ApiError::invalid(format!(
            "{field} is longer than 100 characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(ApiError::invalid(format!(
            "{field} has a control character (a line break, a tab, …)"
        )));
    }
    Ok(())
}

/// Quota limits as the store keeps them: at most `i32::MAX` each.
pub(crate) fn check_limits(quota: &Quota) -> Result<(), ApiError> {
    for v in [quota.total, quota.per_day, quota.max_concurrent]
        .into_iter()
        .flatten()
    {
        if i64::from(v) > i64::from(i32::MAX) {
            return Err(ApiError::invalid("a quota limit is at most 2147483647"));
        }
    }
    Ok(())
}
