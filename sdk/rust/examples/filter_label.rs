//! FilterLabel: only nodes carrying a required label (optionally with a given value) fit.
//!
//! guestConfig: `{"requiredLabel": "disktype", "value": "ssd"}`; without `value`, the
//! label only has to exist. Other nodes are Unschedulable with a reason naming the rule.
//! Node additions and label updates requeue the pods this plugin rejected.

use wasmsched_guest::json::Json;
use wasmsched_guest::{
    config, register, ActionType, ClusterEvent, CycleState, EnqueueExtensions, Filter, LazyPod, NodeInfo,
    Resource, Status,
};

#[derive(Debug, PartialEq)]
struct FilterLabel {
    key: String,
    value: Option<String>,
}

const USAGE: &str = r#"guestConfig must be JSON like {"requiredLabel": "disktype", "value": "ssd"}"#;

impl FilterLabel {
    fn parse(config: Option<&[u8]>) -> Result<Self, String> {
        let raw = config.ok_or_else(|| format!("filter_label: missing config; {}", USAGE))?;
        let v = wasmsched_guest::json::parse(raw).map_err(|e| format!("filter_label: {}; {}", e, USAGE))?;
        let key = match v.get("requiredLabel") {
            Some(Json::Str(k)) if !k.is_empty() => k.clone(),
            _ => return Err(format!("filter_label: requiredLabel must be a non-empty string; {}", USAGE)),
        };
        let value = match v.get("value") {
            None | Some(Json::Null) => None,
            Some(Json::Str(s)) => Some(s.clone()),
            Some(_) => return Err(format!("filter_label: value must be a string; {}", USAGE)),
        };
        Ok(FilterLabel { key, value })
    }

    fn from_config() -> Self {
        Self::parse(config::get()).unwrap_or_else(|e| panic!("{}", e))
    }

    /// Why `label` (the node's value for the key, if any) breaks the rule, or None.
    fn check(&self, node: &str, label: Option<&str>) -> Option<String> {
        match (label, &self.value) {
            (None, None) => Some(format!("node {:?} does not have label {}", node, self.key)),
            (None, Some(want)) => Some(format!("node {:?} does not have label {}={}", node, self.key, want)),
            (Some(got), Some(want)) if got != want => {
                Some(format!("node {:?} has label {}={}, want {}", node, self.key, got, want))
            }
            _ => None,
        }
    }
}

impl EnqueueExtensions for FilterLabel {
    fn events_to_register(&mut self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(Resource::NODE, ActionType::ADD | ActionType::UPDATE_NODE_LABEL)]
    }
}

impl Filter for FilterLabel {
    fn filter(&mut self, _: &mut CycleState, _: &LazyPod, node: &NodeInfo) -> Status {
        let n = match node.node() {
            Some(n) => n,
            None => return Status::error(format!("node {:?} not found", node.name())),
        };
        match self.check(node.name(), n.label(&self.key)) {
            None => Status::SUCCESS,
            Some(reason) => Status::unschedulable(reason),
        }
    }
}

register!(FilterLabel = FilterLabel::from_config(); enqueue, filter);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_parsing() {
        let ok = FilterLabel::parse(Some(br#"{"requiredLabel": "disktype", "value": "ssd"}"#)).unwrap();
        assert_eq!(ok, FilterLabel { key: "disktype".into(), value: Some("ssd".into()) });
        let any = FilterLabel::parse(Some(br#"{"requiredLabel": "gpu"}"#)).unwrap();
        assert_eq!(any.value, None);
        for bad in [None, Some(&b"{}"[..]), Some(&b"[1]"[..]), Some(&br#"{"requiredLabel": 1}"#[..])] {
            assert!(FilterLabel::parse(bad).is_err());
        }
    }

    #[test]
    fn rule_table() {
        let ssd = FilterLabel { key: "disktype".into(), value: Some("ssd".into()) };
        let any = FilterLabel { key: "disktype".into(), value: None };
        assert_eq!(ssd.check("n", Some("ssd")), None);
        assert_eq!(ssd.check("n", Some("hdd")).unwrap(), "node \"n\" has label disktype=hdd, want ssd");
        assert_eq!(ssd.check("n", None).unwrap(), "node \"n\" does not have label disktype=ssd");
        assert_eq!(any.check("n", Some("")), None);
        assert_eq!(any.check("n", None).unwrap(), "node \"n\" does not have label disktype");
    }
}
