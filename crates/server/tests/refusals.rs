//! What an upload's refusal says (issue 32, finding 11): a refused archive's 422 names
//! the archive by what the participant knows, never a path on the server (it said
//! `…/state/entries/<uuid>.zip`). On SQLite and PostgreSQL.

mod common;

use common::{Harness, good_entry};
use serde_json::json;

async fn refusals_name_no_server_path(backend: store::Backend) {
    let h = Harness::start(backend).await;
    let (token, _) = h.ready(json!({"total": 10})).await;
    let state = h.state.path().display().to_string();
    // A truncated zip, a zip with an escaping member, a tar.gz cut short.
    let zip = good_entry();
    let truncated = zip[..zip.len() - 30].to_vec();
    let escaping = common::zip(&[("../escape", b"x"), ("setup.sh", b"#!/bin/sh\n")]);
    let tgz = common::gzip(&common::tar(&[("next.sh", &[b'x'; 4000])]));
    let cut = tgz[..tgz.len() / 2].to_vec();
    for (what, bytes) in [
        ("truncated zip", truncated),
        ("escaping zip", escaping),
        ("cut tar.gz", cut),
    ] {
        let a = h.upload(&token, "cinc2017", "", bytes).await;
        assert_eq!(a.status, 422, "{what}: {a:?}");
        assert!(!a.text.contains(&state), "{what}: {}", a.text);
        for part in ["/state", "entries/", "/tmp", "incoming"] {
            assert!(!a.text.contains(part), "{what} names {part}: {}", a.text);
        }
    }
}

both!(refusals_name_no_server_path);
