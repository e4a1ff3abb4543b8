//! `audit.redact` covers every place a value can appear in a record: nested arguments, values
//! under a redacted key, a flag's `from` for an unpacked stringified object, and arguments that
//! are not JSON at all.

use serde_json::json;
use toolgate_core::Gate;

fn gate() -> Gate {
    Gate::from_json(
        &json!({
            "tools": [{ "name": "login", "inputSchema": { "type": "object",
                "properties": { "user": { "type": "string" }, "cfg": { "type": "object" }, "n": { "type": "integer" } } } }],
            "audit": { "includeArguments": true, "redact": ["password", "token"] }
        })
        .to_string(),
    )
    .unwrap()
}

fn records(g: &Gate) -> String {
    g.audit().unwrap().drain()
}

#[test]
fn no_secret_reaches_the_record() {
    let g = gate();
    let secret = "hunter2-SECRET";
    for args in [
        format!(r#"{{"user":"ann","password":"{secret}"}}"#),
        // the whole root stringified: unpacked, and the flag's `from` held the secret before
        serde_json::to_string(&format!(r#"{{"user":"ann","password":"{secret}"}}"#)).unwrap(),
        // a nested object stringified (repaired by unpacking)
        format!(r#"{{"cfg":"{{\"token\":\"{secret}\"}}"}}"#),
        // a value inside a redacted key
        format!(r#"{{"cfg":{{"token":{{"inner":"{secret}"}}}}}}"#),
        // rejected: not JSON at all, the secret inside
        format!(r#"{{"user":"ann","password":"{secret}""#),
        // rejected after the parse: still recorded redacted
        format!(r#"{{"n":"x","password":"{secret}"}}"#),
    ] {
        let _ = g.check("login", &args);
        let out = records(&g);
        assert!(!out.contains(secret), "{args}\n{out}");
        assert!(out.contains("redacted"), "{args}\n{out}");
    }
}
