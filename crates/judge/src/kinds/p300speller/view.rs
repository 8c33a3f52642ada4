//! The P300 speller's record (subject) view: per trial of the subject's blocks, the
//! target (from the data's triggers), the reported character (the trial's accepted
//! report in the session log), the sequences used and whether the report was valid.

use std::path::Path;

use serde_json::Value;

use crate::kinds::view::{self, Cell, RecordView, Table};

/// The speller's character for a target code (101 = A … 126 = Z, 127 = 1 … 135 = 9,
/// 136 = _), as docs/architecture.md fixes it.
fn speller_char(code: i64) -> Option<char> {
    match code {
        101..=126 => char::from_u32(u32::try_from(code - 101).ok()? + u32::from(b'A')),
        127..=135 => char::from_u32(u32::try_from(code - 127).ok()? + u32::from(b'1')),
        136 => Some('_'),
        _ => None,
    }
}

pub(super) fn record_view(data: &Path, outputs: &Path, name: &str) -> Result<RecordView, String> {
    view::plain_name(name, "subject")?;
    let subject = stream::load::subject(&data.join(name), 0).map_err(|e| e.to_string())?;
    let session: Value = view::output(outputs, "session.json")
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let list = |k: &str| -> Vec<Value> {
        session
            .get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (trials, log) = (list("trials"), list("log"));
    let is = |v: &Value, block: &str, trial: usize| {
        v.get("block").and_then(Value::as_str) == Some(block)
            && v.get("trial").and_then(Value::as_u64) == Some(trial as u64)
    };
    let status = |r: &Value, s: &str| r.get("status").and_then(Value::as_str) == Some(s);
    let mut rows = Vec::new();
    let (mut count, mut right) = (0, 0);
    for b in &subject.blocks {
        for (i, t) in b.trials().map_err(|e| e.to_string())?.iter().enumerate() {
            let accepted = log
                .iter()
                .find(|r| is(r, &b.name, i) && status(r, "accepted"));
            let later = log
                .iter()
                .filter(|r| is(r, &b.name, i) && status(r, "later"))
                .count();
            let outcome = trials.iter().find(|r| is(r, &b.name, i));
            let reported = accepted.and_then(|r| r.get("code")).and_then(Value::as_i64);
            let sequences = outcome
                .and_then(|o| o.get("sequences"))
                .and_then(Value::as_u64);
            let target = speller_char(i64::from(t.code));
            let got = reported.and_then(speller_char);
            let hit = got.is_some() && got == target;
            count += 1;
            right += usize::from(hit);
            let mut said = Cell::text(match (reported, got) {
                (Some(_), Some(ch)) => ch.to_string(),
                (Some(code), None) => format!("code {code}"),
                (None, _) => "—".to_owned(),
            });
            if later > 0 {
                said.remark = Some(format!(
                    "({later} later report{} ignored)",
                    if later > 1 { "s" } else { "" }
                ));
            }
            rows.push(vec![
                Cell::text(&b.name),
                Cell::number((i + 1).to_string()),
                Cell::text(target.map_or_else(|| "?".to_owned(), String::from)),
                said,
                Cell::number(sequences.map_or("5 (none)".to_owned(), |s| s.to_string())),
                Cell::text(if reported.is_some() { "yes" } else { "no" }),
                Cell::verdict(hit, None),
            ]);
        }
    }
    let blocks = subject.blocks.len();
    let head = [
        "Block",
        "Trial",
        "Target",
        "Reported",
        "Sequences used",
        "Valid report",
        "Result",
    ];
    Ok(RecordView {
        notes: vec![format!(
            "{count} trials in {blocks} {}; {right} reported right. A trial without a valid \
             report counts as wrong and takes the full 5 sequences (9 s).",
            if blocks == 1 { "block" } else { "blocks" }
        )],
        problems: if session.is_null() {
            vec!["No session log was kept for this submission's quiz.".into()]
        } else {
            Vec::new()
        },
        table: Some(Table {
            caption: None,
            head: head.map(String::from).to_vec(),
            rows,
        }),
        ..RecordView::default()
    })
}

#[cfg(test)]
mod tests {
    use super::speller_char;

    #[test]
    fn speller_codes_are_row_major() {
        assert_eq!(speller_char(101), Some('A'));
        assert_eq!(speller_char(126), Some('Z'));
        assert_eq!(speller_char(127), Some('1'));
        assert_eq!(speller_char(135), Some('9'));
        assert_eq!(speller_char(136), Some('_'));
        assert_eq!(speller_char(100), None);
        assert_eq!(speller_char(137), None);
    }
}
