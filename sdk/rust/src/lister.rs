//! Nodes of the scheduler's snapshot: by name (`k8s.io/api.node`), all of them
//! (`k8s.io/api.nodeList`, cached per cycle) and their image states (`nodeImageStates`).

use crate::api::{Node, NodeList};
use crate::cell::Once;
use crate::json::{self, Json};
use crate::sys::{self, Kind};
use std::cell::RefCell;
use std::rc::Rc;

thread_local! {
    static NODE_LIST: RefCell<Option<Rc<Vec<u8>>>> = const { RefCell::new(None) };
}

/// Drops the cached node list (at each new cycle).
pub(crate) fn clear_cache() {
    NODE_LIST.with(|c| *c.borrow_mut() = None);
}

/// Node protobuf bytes owned by the caller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedNode(pub Vec<u8>);

impl OwnedNode {
    /// The decoded view.
    pub fn get(&self) -> Node<'_> {
        Node::new(&self.0)
    }
}

/// The snapshot's node list; cheap to clone (shared bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedNodeList(pub Rc<Vec<u8>>);

impl OwnedNodeList {
    /// The decoded view.
    pub fn get(&self) -> NodeList<'_> {
        NodeList::new(&self.0)
    }
}

/// The node named `name` from the snapshot, or `None` if the host does not know it.
pub fn node(name: &str) -> Option<OwnedNode> {
    let b = sys::read_with(Kind::Proto, |buf, limit| unsafe {
        sys::node(name.as_ptr(), name.len() as u32, buf, limit)
    });
    if b.is_empty() {
        None
    } else {
        Some(OwnedNode(b))
    }
}

/// All nodes of the snapshot (not only the feasible ones). Fetched once per scheduling
/// cycle when the guest exports `prefilter`, else once per hook call.
pub fn node_list() -> OwnedNodeList {
    if let Some(l) = NODE_LIST.with(|c| c.borrow().clone()) {
        return OwnedNodeList(l);
    }
    let b = Rc::new(sys::read_with(Kind::NodeList, |buf, limit| unsafe { sys::node_list(buf, limit) }));
    NODE_LIST.with(|c| *c.borrow_mut() = Some(b.clone()));
    OwnedNodeList(b)
}

/// One entry of a node's image states (`framework.ImageStateSummary`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageState {
    /// Image name as the kubelet reports it (e.g. `nginx:1.25`).
    pub name: String,
    /// Image size in bytes.
    pub size: i64,
    /// Number of nodes in the snapshot that have the image.
    pub num_nodes: i64,
}

/// The image states of one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageStates {
    /// Entries in the host's order.
    pub images: Vec<ImageState>,
}

impl ImageStates {
    /// The entry for `name`, if the node has that image.
    pub fn get(&self, name: &str) -> Option<&ImageState> {
        self.images.iter().find(|i| i.name == name)
    }

    /// Parses the host's JSON (`{"img":{"Size":1,"NumNodes":2,"Nodes":…}}` or `null`).
    pub fn parse(bytes: &[u8]) -> Result<Self, json::JsonError> {
        let v = json::parse(bytes)?;
        let mut images = Vec::new();
        if let Json::Object(members) = v {
            for (name, e) in members {
                let field = |k: &str| e.get_ci(k).and_then(Json::as_i64).unwrap_or(0);
                images.push(ImageState { size: field("Size"), num_nodes: field("NumNodes"), name });
            }
        }
        Ok(ImageStates { images })
    }
}

/// The image states of node `node_name`; empty if the node is unknown or the payload is
/// not valid JSON.
pub fn image_states(node_name: &str) -> ImageStates {
    let b = sys::read_with(Kind::Json, |buf, limit| unsafe {
        sys::node_image_states(node_name.as_ptr(), node_name.len() as u32, buf, limit)
    });
    ImageStates::parse(&b).unwrap_or_default()
}

/// A node as seen by a hook: its name, and its object and image states on demand.
pub struct NodeInfo {
    current: bool,
    name: Once<String>,
    node: Once<Option<OwnedNode>>,
    images: Once<ImageStates>,
}

impl NodeInfo {
    /// The node of the current hook call (`currentNodeName`, fetched on first use).
    pub(crate) fn current() -> Self {
        NodeInfo { current: true, name: Once::default(), node: Once::default(), images: Once::default() }
    }

    /// A node of the snapshot by name (like the shared lister's `NodeInfos().Get`).
    pub fn named(name: impl Into<String>) -> Self {
        NodeInfo {
            current: false,
            name: Once::with(name.into()),
            node: Once::default(),
            images: Once::default(),
        }
    }

    /// The node name.
    pub fn name(&self) -> &str {
        let current = self.current;
        self.name.get_or_init(|| {
            if current {
                sys::read_string(|b, l| unsafe { sys::current_node_name(b, l) })
            } else {
                String::new()
            }
        })
    }

    /// The Node object (one host call on first use); `None` if the snapshot lacks it.
    pub fn node(&self) -> Option<Node<'_>> {
        self.node.get_or_init(|| node(self.name())).as_ref().map(OwnedNode::get)
    }

    /// The node's image states (one host call on first use).
    pub fn image_states(&self) -> &ImageStates {
        self.images.get_or_init(|| image_states(self.name()))
    }
}

impl std::fmt::Debug for NodeInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeInfo({:?})", self.name.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::Writer;
    use crate::testing;

    fn node_bytes(name: &str) -> Vec<u8> {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, name);
        });
        w.finish()
    }

    #[test]
    fn current_node_info_is_lazy() {
        testing::reset();
        testing::set_node_name("n1");
        testing::add_node(node_bytes("n1"));
        let ni = NodeInfo::current();
        assert!(testing::calls("currentNodeName").is_empty());
        assert_eq!(ni.name(), "n1");
        assert_eq!(ni.name(), "n1");
        assert_eq!(testing::calls("currentNodeName").len(), 1);
        assert!(testing::calls("node").is_empty());
        assert_eq!(ni.node().unwrap().name(), "n1");
        assert_eq!(ni.node().unwrap().name(), "n1");
        assert_eq!(testing::calls("node").len(), 1);
    }

    #[test]
    fn unknown_node_is_none() {
        testing::reset();
        assert!(NodeInfo::named("ghost").node().is_none());
        assert!(node("ghost").is_none());
        assert!(NodeInfo::named("ghost").image_states().images.is_empty());
    }

    #[test]
    fn node_list_is_cached_until_cleared() {
        testing::reset();
        testing::add_node(node_bytes("a"));
        testing::add_node(node_bytes("b"));
        assert_eq!(node_list().get().len(), 2);
        assert_eq!(node_list().get().items().map(|n| n.name()).collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(testing::calls("nodeList").len(), 1);
        clear_cache();
        assert_eq!(node_list().get().len(), 2);
        assert_eq!(testing::calls("nodeList").len(), 2);
    }

    #[test]
    fn image_states_parse() {
        testing::reset();
        testing::set_image_states(
            "n1",
            r#"{"test-image:v1":{"Size":100000000,"NumNodes":2,"Nodes":{"n1":{},"n2":{}}},"x:1":{"size":5,"numNodes":1,"Nodes":null}}"#,
        );
        let st = NodeInfo::named("n1");
        let img = st.image_states().get("test-image:v1").unwrap();
        assert_eq!((img.size, img.num_nodes), (100_000_000, 2));
        assert_eq!(st.image_states().get("x:1").unwrap().size, 5);
        assert!(st.image_states().get("nope").is_none());
        assert_eq!(ImageStates::parse(b"null").unwrap(), ImageStates::default());
        assert!(ImageStates::parse(b"{").is_err());
    }
}
