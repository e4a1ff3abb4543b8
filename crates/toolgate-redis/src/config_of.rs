//! The `state.redis` block of a config's JSON text, for the bindings that build a store from a
//! gate's own config (the Node and Python packages).

use toolgate_core::config::RedisConfig;

/// The `state.redis` block of `config_json`, when it has one. Call it after the core compiled
/// the config (which checked the block's shape); a text that does not parse has none.
pub fn redis_config_of(config_json: &str) -> Option<RedisConfig> {
    let v: serde_json::Value = serde_json::from_str(config_json).ok()?;
    let block = v.get("state")?.get("redis")?;
    serde_json::from_value(block.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::redis_config_of;

    #[test]
    fn reads_the_block_or_nothing() {
        let c = redis_config_of(r#"{"tools":[],"state":{"redis":{"url":"redis://127.0.0.1:6390","keyPrefix":"a:"}}}"#).unwrap();
        assert_eq!(c.url, "redis://127.0.0.1:6390");
        assert!(redis_config_of(r#"{"tools":[],"state":{"maxSessions":3}}"#).is_none());
        assert!(redis_config_of("not json").is_none());
    }
}
