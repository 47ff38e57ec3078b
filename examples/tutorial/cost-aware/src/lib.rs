//! CostAware: keeps pods within an hourly budget and prefers cheap nodes.
//!
//! guestConfig: `{"prices": {"m5.large": 96, ...}}`, cents per hour for each value of the
//! node label `node.kubernetes.io/instance-type`.

use wasmsched_guest::json::{self, Json};
use wasmsched_guest::{config, klog, register, CycleState, Filter, LazyPod, NodeInfo, Score, Status};

const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
const BUDGET_ANNOTATION: &str = "cost.example.com/max-cents-per-hour";

struct CostAware {
    prices: Vec<(String, i64)>,
    cheapest: i64,
    dearest: i64,
}

impl CostAware {
    /// Parses guestConfig; the error becomes the plugin's load error.
    fn parse(config: Option<&[u8]>) -> Result<CostAware, String> {
        // Without guestConfig nothing is priced (and `wasmsched inspect` can load the plugin).
        let raw = match config {
            Some(raw) => raw,
            None => return Ok(CostAware { prices: Vec::new(), cheapest: 0, dearest: 0 }),
        };
        let doc = json::parse(raw).map_err(|e| e.to_string())?;
        let members = doc.get("prices").and_then(Json::as_object).ok_or("prices must be an object")?;
        let mut prices = Vec::new();
        for (instance_type, cents) in members {
            match cents.as_i64() {
                Some(c) if c >= 0 => prices.push((instance_type.clone(), c)),
                _ => return Err(format!("price of {} must be a non-negative integer", instance_type)),
            }
        }
        // Precomputed once: Score runs once per node and pod.
        let cheapest = prices.iter().map(|p| p.1).min().unwrap_or(0);
        let dearest = prices.iter().map(|p| p.1).max().unwrap_or(0);
        Ok(CostAware { prices, cheapest, dearest })
    }

    /// Runs once per guest instance, inside `_start`.
    fn from_config() -> CostAware {
        let plugin = CostAware::parse(config::get()).unwrap_or_else(|e| panic!("CostAware: {}", e));
        klog::info_s("CostAware configured", &[("instanceTypes", &plugin.prices.len())]);
        plugin
    }

    /// The node's price in cents per hour, if its instance type is priced.
    fn price(&self, node: &NodeInfo) -> Option<i64> {
        let instance_type = node.node()?.label(INSTANCE_TYPE_LABEL)?;
        self.prices.iter().find(|(t, _)| t == instance_type).map(|(_, cents)| *cents)
    }
}

impl Filter for CostAware {
    fn filter(&mut self, _: &mut CycleState, pod: &LazyPod, node: &NodeInfo) -> Status {
        let budget = match pod.metadata().annotation(BUDGET_ANNOTATION) {
            None => return Status::SUCCESS, // no budget: every node fits
            Some(text) => match text.trim().parse::<i64>() {
                Ok(cents) => cents,
                // No node can fix a bad annotation: preemption would not help either.
                Err(_) => return Status::unresolvable(format!("{} is not an integer", BUDGET_ANNOTATION)),
            },
        };
        match self.price(node) {
            Some(cents) if cents <= budget => Status::SUCCESS,
            Some(_) => Status::unschedulable("node(s) over the pod's hourly budget"),
            None => Status::unschedulable("node(s) without a known price"),
        }
    }
}

impl Score for CostAware {
    /// 100 on the cheapest instance type, 0 on the dearest and on unpriced nodes.
    fn score(&mut self, _: &mut CycleState, _: &LazyPod, node: &NodeInfo) -> Result<i32, Status> {
        let score = match self.price(node) {
            None => 0,
            Some(_) if self.dearest == self.cheapest => 100,
            Some(cents) => 100 * (self.dearest - cents) / (self.dearest - self.cheapest),
        };
        Ok(score as i32)
    }
}

register!(CostAware = CostAware::from_config(); filter, score);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmsched_guest::pb::Writer;
    use wasmsched_guest::{testing, Code};

    const PRICES: &str = r#"{"prices": {"m5.large": 96, "c5.2xlarge": 340, "g5.xlarge": 1006}}"#;

    /// A Pod in protobuf: metadata (1) with name (1), uid (5) and annotations (12).
    fn pod(budget: Option<&str>) -> Vec<u8> {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, "p").string(5, "uid-1");
            if let Some(b) = budget {
                m.map_entry(12, BUDGET_ANNOTATION, b);
            }
        });
        w.finish()
    }

    /// A Node in protobuf: metadata (1) with name (1) and labels (11).
    fn node(name: &str, instance_type: &str) -> Vec<u8> {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, name).map_entry(11, INSTANCE_TYPE_LABEL, instance_type);
        });
        w.finish()
    }

    fn cluster() {
        testing::reset();
        testing::set_config(PRICES);
        testing::add_node(node("small", "m5.large"));
        testing::add_node(node("large", "c5.2xlarge"));
        testing::add_node(node("gpu", "g5.xlarge"));
        testing::add_node(node("odd", "t2.nano"));
    }

    #[test]
    fn config_parsing() {
        for (config, want) in [
            (None, Ok(0)),
            (Some(PRICES), Ok(3)),
            (Some("{"), Err("invalid JSON at byte 1: expected object key")),
            (Some("{}"), Err("prices must be an object")),
            (Some(r#"{"prices": {"x": -1}}"#), Err("price of x must be a non-negative integer")),
        ] {
            let got = CostAware::parse(config.map(str::as_bytes)).map(|p| p.prices.len());
            assert_eq!(got, want.map_err(String::from), "{:?}", config);
        }
    }

    #[test]
    fn filter_by_budget() {
        cluster();
        let mut plugin = CostAware::parse(Some(PRICES.as_bytes())).unwrap();
        for (budget, node_name, want) in [
            (None, "gpu", Status::SUCCESS),
            (None, "odd", Status::SUCCESS),
            (Some("400"), "large", Status::SUCCESS),
            (Some("340"), "large", Status::SUCCESS),
            (Some("339"), "large", Status::unschedulable("node(s) over the pod's hourly budget")),
            (Some("400"), "odd", Status::unschedulable("node(s) without a known price")),
            (
                Some("cheap"),
                "small",
                Status::unresolvable(format!("{} is not an integer", BUDGET_ANNOTATION)),
            ),
        ] {
            let got = plugin.filter(
                &mut CycleState::new(),
                &LazyPod::from_bytes(pod(budget)),
                &NodeInfo::named(node_name),
            );
            assert_eq!(got, want, "budget {:?} on {}", budget, node_name);
        }
    }

    #[test]
    fn exports_as_the_host_calls_them() {
        cluster();
        testing::set_current_pod(pod(None));
        // `register!` generated `score()` and `filter()`. Score packs the score in the high
        // 32 bits and the status code in the low 32 bits.
        for (node_name, want) in [("small", 100), ("large", 73), ("gpu", 0), ("odd", 0)] {
            testing::set_node_name(node_name);
            assert_eq!(score(), (want as i64) << 32, "{}", node_name);
        }
        testing::set_current_pod(pod(Some("100")));
        testing::set_node_name("large");
        assert_eq!(filter(), Code::UNSCHEDULABLE.0);
        let reason = testing::last_result_str("result.status_reason");
        assert_eq!(reason.as_deref(), Some("node(s) over the pod's hourly budget"));
        // The plugin was constructed on the first call and logged once.
        let logs = testing::logs();
        assert_eq!(logs.len(), 1);
        assert_eq!(logs[0].message, "CostAware configured");
        assert_eq!(logs[0].kvs, vec!["instanceTypes", "3"]);
    }
}
