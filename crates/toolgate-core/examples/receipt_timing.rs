//! What a signed receipt costs (issue 5), in the core alone: the `args` digest, a `jti`, the
//! ed25519 signature (`issue`), and `verify` with and without an arguments expectation.
//! `cargo run --release -p toolgate-core --example receipt_timing`
//!
//! Each row is timed in ~20 µs samples (one call each for the signature rows); the median and
//! p90 of the per-call time over the samples are printed, with the raw ed25519 sign/verify
//! beside them so the overhead around the signature can be read off.
// the allocator of the Node binding, so these figures are the binding's
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::Instant;

use ed25519_dalek::{Signer, SigningKey};
use serde_json::json;
use toolgate_core::receipt::{args_digest, new_jti, verify, Claims, Expect, ReceiptKey, ReceiptVerifier};

/// Samples per row.
const SAMPLES: usize = 2001;
/// Wall time each sample aims at: short enough that most samples run unpreempted on a busy
/// 2-core machine, so the median is the cost of the work, not of the scheduler.
const SAMPLE_NS: f64 = 20_000.0;

/// Median and p90 of per-call nanoseconds over samples of `f`, each sample a batch of calls
/// sized to about [`SAMPLE_NS`].
fn time(mut f: impl FnMut()) -> (f64, f64) {
    let t = Instant::now();
    let mut warm = 0;
    while warm < 200 || t.elapsed().as_millis() < 50 {
        f();
        warm += 1;
    }
    let batch = ((SAMPLE_NS * warm as f64 / t.elapsed().as_nanos() as f64) as usize).max(1);
    let mut per_call: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_nanos() as f64 / batch as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    (per_call[SAMPLES / 2], per_call[SAMPLES * 9 / 10])
}

fn row(name: &str, f: impl FnMut()) {
    let (median, p90) = time(f);
    println!("{name:<46} median {:>8.2} µs   p90 {:>8.2} µs", median / 1000.0, p90 / 1000.0);
}

fn main() {
    let key = ReceiptKey::from_seed("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A").unwrap();
    let args = json!({"path": "reports/2026/q3-summary.md", "limit": 10, "tags": ["finance", "q3"], "recursive": false});
    let claims = |jti: String| Claims {
        sub: Some("u-1842"),
        tool: "read_file",
        action: Some("read"),
        resource: Some("file:reports/2026/q3-summary.md"),
        call_id: Some("call_9f2c"),
        args: args_digest(&args),
        iat: 1_760_000_000,
        exp: 1_760_000_300,
        jti,
    };
    let fixed = claims(new_jti().unwrap());
    let receipt = key.issue(&fixed);
    let expect = Expect { tool: Some("read_file"), arguments: Some(&args), sub: Some("u-1842") };
    assert!(verify(&receipt, key.public_key(), 1_760_000_010, &expect).is_ok());
    println!("receipt: {} bytes; args: {}", receipt.len(), args);

    let raw = SigningKey::from_bytes(&[7; 32]);
    let raw_vk = raw.verifying_key();
    let msg = receipt.rsplit_once('.').unwrap().0.as_bytes();
    let raw_sig = raw.sign(msg);

    row("ed25519 sign (raw, same message)", || {
        black_box(raw.sign(black_box(msg)));
    });
    row("ed25519 verify_strict (raw)", || {
        black_box(raw_vk.verify_strict(black_box(msg), &raw_sig).is_ok());
    });
    row("args_digest (JCS + SHA-256)", || {
        black_box(args_digest(black_box(&args)));
    });
    row("new_jti (getrandom)", || {
        black_box(new_jti().unwrap());
    });
    row("issue (claims ready)", || {
        black_box(key.issue(black_box(&fixed)));
    });
    row("issue per allowed call (digest + jti + issue)", || {
        let c = claims(new_jti().unwrap());
        black_box(key.issue(&c));
    });
    row("verify (no expectations)", || {
        black_box(verify(black_box(&receipt), key.public_key(), 1_760_000_010, &Expect::default()).is_ok());
    });
    row("verify (tool + arguments + sub)", || {
        black_box(verify(black_box(&receipt), key.public_key(), 1_760_000_010, &expect).is_ok());
    });
    let verifier = ReceiptVerifier::new(key.public_key()).unwrap();
    row("ReceiptVerifier::verify (key decoded once)", || {
        black_box(verifier.verify(black_box(&receipt), 1_760_000_010, &expect).is_ok());
    });
}
