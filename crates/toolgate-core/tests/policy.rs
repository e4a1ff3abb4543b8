//! The policy pipeline in the core, with a controlled clock: token expiry, loop windows, the
//! engine stages, eviction, and many threads sharing one gate. The full decision table runs
//! through the binding in `__test__/policy.test.ts` on the same config.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use toolgate_core::time::Clock;
use toolgate_core::{CallContext, EngineAnswer, Gate, Outcome, Reason, RulesAnswer, Stage};

fn config() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../__test__/fixtures/policy/config.json")).unwrap()
}

fn gate_with_clock() -> (Gate, Arc<AtomicU64>) {
    let now = Arc::new(AtomicU64::new(1_800_000_000_000));
    let n = Arc::clone(&now);
    let gate = Gate::from_json(&config()).unwrap().with_clock(Clock::from_fn(move || n.load(Ordering::SeqCst)));
    (gate, now)
}

fn ctx(json: &str) -> CallContext {
    CallContext::from_json(json).unwrap()
}

#[test]
fn tokens_expire_on_the_gate_clock_and_work_exactly_once() {
    let (gate, now) = gate_with_clock();
    let alice = ctx(r#"{"subject":"alice"}"#);
    let who = gate.who(&alice, Stage::Full);
    let v = gate.check_as("send_email", r#"{"to":"a","body":"b"}"#, &who);
    assert_eq!((v.outcome, v.reason), (Outcome::Confirm, Some(Reason::ConfirmRequired)));
    let c = v.confirmation.clone().unwrap();
    assert!(c.expires_at.ends_with('Z'), "{}", c.expires_at);
    assert!(!v.message.unwrap().contains(&c.token));
    // a second pending call: expires after 300 s
    let late = gate.check_as("send_email", r#"{"to":"a","body":"c"}"#, &who).confirmation.unwrap().token;
    let (tool, ok) = gate.confirm(&c.token, &gate.who(&alice, Stage::Full));
    assert_eq!((tool.as_deref(), ok.outcome), (Some("send_email"), Outcome::Passed));
    assert_eq!(gate.confirm(&c.token, &gate.who(&alice, Stage::Full)).1.reason, Some(Reason::TokenInvalid));
    now.fetch_add(300_001, Ordering::SeqCst);
    assert_eq!(gate.confirm(&late, &gate.who(&alice, Stage::Full)).1.reason, Some(Reason::TokenInvalid));
}

#[test]
fn the_loop_window_slides() {
    let (gate, now) = gate_with_clock();
    let bob = ctx(r#"{"subject":"bob"}"#);
    let call = |g: &Gate| g.check_as("search", r#"{"q":"same"}"#, &g.who(&bob, Stage::Full)).outcome;
    for _ in 0..3 {
        assert_eq!(call(&gate), Outcome::Passed);
    }
    assert_eq!(call(&gate), Outcome::Rejected);
    now.fetch_add(59_000, Ordering::SeqCst);
    assert_eq!(call(&gate), Outcome::Rejected, "still inside the 60 s window");
    now.fetch_add(2_000, Ordering::SeqCst);
    assert_eq!(call(&gate), Outcome::Passed, "the first three calls left the window");
}

#[test]
fn the_engine_stage_asks_then_finishes_without_recording_twice() {
    let gate = Gate::from_json(&config()).unwrap();
    let bob = ctx(r#"{"subject":"bob"}"#);
    let ask = gate.check_as("admin_panel", "{}", &gate.who(&bob, Stage::Ask));
    assert_eq!((ask.outcome, ask.engine_question), (Outcome::Passed, Some(RulesAnswer::NoRule)));
    let ask = gate.check_as("search", r#"{"q":"x"}"#, &gate.who(&bob, Stage::Ask));
    assert_eq!(ask.engine_question, Some(RulesAnswer::Allow));
    // a built-in deny is final at the ask stage: no question
    let mallory = ctx(r#"{"subject":"mallory"}"#);
    let denied = gate.check_as("search", r#"{"q":"x"}"#, &gate.who(&mallory, Stage::Ask));
    assert_eq!((denied.reason, denied.engine_question), (Some(Reason::DenyRule), None));
    for (answer, tool, want) in [
        (EngineAnswer::Allow, "admin_panel", None),
        (EngineAnswer::Delegate, "admin_panel", Some(Reason::NoRule)),
        (EngineAnswer::Deny, "search", Some(Reason::Engine)),
        (EngineAnswer::Delegate, "search", None),
        // a call stage one did not put to the engines never finishes as allowed
        (EngineAnswer::Unasked, "search", Some(Reason::Engine)),
        (EngineAnswer::Unasked, "admin_panel", Some(Reason::Engine)),
    ] {
        let v = gate.check_as(tool, r#"{"q":"x"}"#, &gate.who(&bob, Stage::Answers(&[answer])));
        assert_eq!(v.reason, want, "{tool} {answer:?}");
        assert_eq!(v.engine_question, None);
    }
    // asking never counted toward the loop guard: 2 finished searches so far, a third passes
    let v = gate.check_as("search", r#"{"q":"x"}"#, &gate.who(&bob, Stage::Full));
    assert_eq!(v.outcome, Outcome::Passed);
    // a missing answer denies
    let v = gate.check_as("search", r#"{"q":"y"}"#, &gate.who(&bob, Stage::Answers(&[])));
    assert_eq!(v.reason, Some(Reason::Engine));
}

#[test]
fn a_call_the_rules_refused_when_asked_is_not_finished_unasked_after_they_change() {
    // the deny rule runs out between the two steps (the engines took their time)
    let config = r#"{ "version": 1,
        "tools": [ { "name": "close_account", "inputSchema": { "type": "object" } } ],
        "policy": { "rules": [
            { "effect": "allow", "tools": ["close_account"] },
            { "effect": "deny", "tools": ["close_account"], "when": "now < '2027-01-15T08:00:00Z'" } ] } }"#;
    let now = Arc::new(AtomicU64::new(1_800_000_000_000 - 1)); // 2027-01-15T08:00:00Z - 1 ms
    let n = Arc::clone(&now);
    let gate = Gate::from_json(config).unwrap().with_clock(Clock::from_fn(move || n.load(Ordering::SeqCst)));
    let ana = ctx(r#"{"subject":"ana"}"#);
    let asked = gate.check_as("close_account", "{}", &gate.who(&ana, Stage::Ask));
    assert_eq!((asked.reason, asked.engine_question), (Some(Reason::DenyRule), None), "refused before the engines: not asked");
    now.fetch_add(2, Ordering::SeqCst);
    let v = gate.check_as("close_account", "{}", &gate.who(&ana, Stage::Answers(&[EngineAnswer::Unasked])));
    assert_eq!((v.outcome, v.reason), (Outcome::Denied, Some(Reason::Engine)));
    assert!(v.message.as_deref().unwrap().contains("did not judge `close_account`"), "{:?}", v.message);
    // the words of the wire, both ways
    for a in [EngineAnswer::Allow, EngineAnswer::Deny, EngineAnswer::Delegate, EngineAnswer::Unasked] {
        assert_eq!(a.as_str().parse::<EngineAnswer>().unwrap(), a);
    }
    assert!("Allow".parse::<EngineAnswer>().unwrap_err().to_string().contains(r#""Allow""#));
}

#[test]
fn an_evicted_session_reads_as_the_top_label() {
    let text = config().replace(
        r#""loop": { "maxIdentical": 3, "windowSeconds": 60 },"#,
        r#""loop": { "maxIdentical": 3, "windowSeconds": 60 }, "state": { "maxSessions": 3 },"#,
    );
    let gate = Gate::from_json(&text).unwrap();
    let sink = |g: &Gate, s: &str| g.check_as("post_webhook", r#"{"url":"u"}"#, &g.who(&ctx(&format!(r#"{{"session":"{s}"}}"#)), Stage::Full)).reason;
    assert_eq!(sink(&gate, "first"), None);
    for i in 0..10 {
        gate.check_as("search", r#"{"q":"x"}"#, &gate.who(&ctx(&format!(r#"{{"session":"other{i}"}}"#)), Stage::Full));
    }
    assert_eq!(sink(&gate, "first"), Some(Reason::Taint));
}

#[test]
fn many_threads_share_one_gate() {
    let gate = Arc::new(Gate::from_json(&config()).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || {
                let c = ctx(&format!(r#"{{"subject":"u{t}","roles":["analyst"],"session":"s{t}"}}"#));
                let mut outcomes = Vec::new();
                for i in 0..200 {
                    let v = gate.check_as("read_file", &format!(r#"{{"path":"reports/{i}"}}"#), &gate.who(&c, Stage::Full));
                    outcomes.push(v.outcome);
                }
                let sink = gate.check_as("send_email", r#"{"to":"a","body":"b"}"#, &gate.who(&c, Stage::Full));
                (outcomes, sink.reason)
            })
        })
        .collect();
    for h in handles {
        let (outcomes, sink) = h.join().unwrap();
        assert!(outcomes.iter().all(|o| *o == Outcome::Passed));
        assert_eq!(sink, Some(Reason::Taint), "each session read internal data");
    }
}

#[test]
fn no_policy_block_means_schema_gate_only_but_declarations_still_hold() {
    let gate = Gate::from_json(
        r#"{"tools":[{"name":"f","resource":"file:{p*}","args":{"o":{"pin":"subject"}},"writes":true,
            "inputSchema":{"type":"object","properties":{"p":{"type":"string"},"o":{"type":"string"}}}}]}"#,
    )
    .unwrap();
    assert!(!gate.has_policy());
    let anon = gate.check("f", r#"{"p":"a"}"#);
    assert_eq!(anon.reason, Some(Reason::NoSubject));
    let alice = ctx(r#"{"subject":"alice"}"#);
    let v = gate.check_as("f", r#"{"p":"../x"}"#, &gate.who(&alice, Stage::Full));
    assert_eq!(v.reason, Some(Reason::UnresolvedResource));
    let v = gate.check_as("f", r#"{"p":"a/b"}"#, &gate.who(&alice, Stage::Full));
    assert_eq!((v.outcome, v.resource.as_deref()), (Outcome::Confirm, Some("file:a/b")));
}

/// A confirmation token is bound to the session it was issued in, not only to the subject:
/// confirming from another session would dodge that session's taint (and anonymous callers are
/// told apart by their session).
#[test]
fn tokens_are_bound_to_their_session() {
    let (gate, _) = gate_with_clock();
    let issue = |c: &str| {
        let c = ctx(c);
        gate.check_as("send_email", r#"{"to":"a","body":"b"}"#, &gate.who(&c, Stage::Full)).confirmation.unwrap().token
    };
    let confirm = |t: &str, c: &str| gate.confirm(t, &gate.who(&ctx(c), Stage::Full)).1;
    let t = issue(r#"{"subject":"alice","session":"s1"}"#);
    assert_eq!(confirm(&t, r#"{"subject":"alice","session":"s2"}"#).reason, Some(Reason::TokenInvalid));
    assert_eq!(confirm(&t, r#"{"subject":"alice"}"#).reason, Some(Reason::TokenInvalid));
    // a refused attempt from elsewhere does not burn the token for its owner
    assert!(confirm(&t, r#"{"subject":"alice","session":"s1"}"#).allowed());
    let anon = issue(r#"{"session":"tab-1"}"#);
    assert_eq!(confirm(&anon, r#"{"session":"tab-2"}"#).reason, Some(Reason::TokenInvalid));
    assert!(confirm(&anon, r#"{"session":"tab-1"}"#).allowed());
}

/// The person approving a write sees the arguments that decide it first, every key, and any
/// value cut says so.
#[test]
fn confirmation_summaries_show_what_decides_the_call() {
    let (gate, _) = gate_with_clock();
    let c = ctx(r#"{"subject":"alice"}"#);
    let long = "x".repeat(4000);
    let v = gate.check_as("send_email", &format!(r#"{{"body":"{long}","to":"mallory@evil.example"}}"#), &gate.who(&c, Stage::Full));
    let s = v.confirmation.unwrap().summary;
    assert!(s.find("to:").unwrap() < s.find("body:").unwrap(), "{s}");
    assert!(s.contains("mallory@evil.example") && s.contains("more characters"), "{s}");
}

/// A listing (`Gate::visible`, `filter_tools`, the unknown-tool message) finds the caller's rules
/// once; it must show exactly what asking tool by tool (`visible_name`) shows, for every caller
/// shape the policy distinguishes: roles, a persona, a subject glob (the banned one), a `when` on
/// the purpose, `{subject}` resources, an operator surface, and no context at all.
#[test]
fn a_listing_shows_what_each_tool_alone_shows() {
    let (gate, _) = gate_with_clock();
    let names: Vec<String> =
        ["read_file", "read_secret", "get_doc", "list_orders", "user_files", "send_email", "transfer", "delete_user", "admin_panel", "nope"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let callers = [
        "{}",
        r#"{"subject":"alice"}"#,
        r#"{"subject":"mallory","roles":["analyst","admin"]}"#,
        r#"{"roles":["analyst"],"purpose":"audit"}"#,
        r#"{"roles":["analyst"],"purpose":"sales"}"#,
        r#"{"roles":["verifier"]}"#,
        r#"{"roles":["finance"],"subject":"f-1"}"#,
        r#"{"roles":["admin"],"surface":"operator"}"#,
    ];
    for c in callers {
        let ctx = ctx(c);
        let who = gate.who(&ctx, Stage::Full);
        let one_by_one: Vec<bool> = names.iter().map(|n| gate.visible_name(n, &who)).collect();
        assert_eq!(gate.visible(&names, &who), one_by_one, "caller {c}");
        // the unknown-tool message lists exactly the visible ones
        let m = gate.check_as("no_such_tool", "{}", &who).message.unwrap();
        for (n, shown) in names.iter().zip(&one_by_one) {
            assert_eq!(m.contains(&format!("`{n}`")), *shown, "caller {c}: `{n}` in {m}");
        }
    }
}

#[test]
fn a_caller_no_allow_rule_names_is_offered_no_tool_and_others_see_what_listing_shows() {
    let cfg = r#"{"version":1,
        "tools":[{"name":"read_file"},{"name":"read_files"},{"name":"write_file"},{"name":"admin_panel","surface":"operator"}],
        "policy":{"personas":[{"name":"night","when":"context.shift == 'night'"}],"rules":[
            {"id":"readers","effect":"allow","roles":["reader"],"tools":["read_*"]},
            {"id":"writers","effect":"allow","roles":["writer"],"tools":["write_file"],"when":"purpose == 'edit'"},
            {"id":"night","effect":"allow","personas":["night"],"tools":["read_file"]},
            {"id":"nobody-writes","effect":"deny","tools":["write_file"]}]}}"#;
    let gate = Gate::from_json(cfg).unwrap();
    let names: Vec<String> = gate.tool_names().map(str::to_owned).collect();
    for c in [
        "{}",
        r#"{"subject":"x"}"#,
        r#"{"roles":["nobody"]}"#,
        r#"{"roles":["reader"]}"#,
        r#"{"roles":["writer"],"purpose":"edit"}"#,
        r#"{"roles":["writer"]}"#,
        r#"{"context":{"shift":"night"}}"#,
    ] {
        let ctx = ctx(c);
        let who = gate.who(&ctx, Stage::Full);
        let seen = gate.visible(&names, &who);
        let v = gate.check_as("read_fil", "{}", &who);
        let m = v.message.unwrap();
        assert_eq!(v.reason, Some(Reason::UnknownTool));
        assert_eq!(m.contains("No tools are available"), !seen.contains(&true), "{c}: {m} / {seen:?}");
        for (n, s) in names.iter().zip(&seen) {
            assert_eq!(m.contains(&format!("`{n}`")), *s, "{c}: {n} {m}");
        }
    }
    // no allow rule names these callers: answered without asking each tool
    let none = ctx(r#"{"roles":["nobody"]}"#);
    assert_eq!(gate.check_as("read_fil", "{}", &gate.who(&none, Stage::Full)).message.unwrap(), "Unknown tool `read_fil`. No tools are available.");
}

#[test]
fn a_pin_the_schema_would_prune_or_rewrite_refuses_the_call_never_runs_it_unscoped() {
    let gate = |schema: &str| {
        Gate::from_json(&format!(r#"{{"version":1,"tools":[{{"name":"list_orders","inputSchema":{schema},"args":{{"owner":{{"pin":"subject"}}}}}}]}}"#))
            .unwrap()
    };
    let ana = ctx(r#"{"subject":"ana"}"#);
    let run = |g: &Gate, args: &str| g.check_as("list_orders", args, &g.who(&ana, Stage::Full));
    // the pinned key is not in a closed schema: repair would prune it and list every owner's orders
    let closed = gate(r#"{"type":"object","properties":{"status":{"type":"string"}},"additionalProperties":false}"#);
    let v = run(&closed, r#"{"status":"open"}"#);
    assert_eq!((v.outcome, v.reason), (Outcome::Rejected, Some(Reason::Invalid)), "{v:?}");
    assert!(v.message.as_deref().unwrap().contains("pins to the caller's identity"), "{:?}", v.message);
    // the same through a chosen anyOf branch
    let branch = gate(r#"{"type":"object","anyOf":[{"properties":{"status":{"type":"string"}},"additionalProperties":false}]}"#);
    assert!(!run(&branch, r#"{"status":"open"}"#).allowed());
    // a schema that would rewrite the pinned value (an enum one edit from the subject)
    let rewrite = gate(r#"{"type":"object","properties":{"owner":{"enum":["anna","bob"]},"status":{"type":"string"}}}"#);
    let v = run(&rewrite, r#"{"status":"open"}"#);
    assert!(!v.allowed(), "the pin `ana` must never run as `anna`: {v:?}");
    // a schema that accepts the pin: allowed, pinned
    let open = gate(r#"{"type":"object","properties":{"owner":{"type":"string"},"status":{"type":"string"}},"additionalProperties":false}"#);
    let v = run(&open, r#"{"status":"open","extra":1}"#);
    assert!(v.allowed(), "{v:?}");
    assert_eq!(v.arguments.unwrap()["owner"], "ana");
}
