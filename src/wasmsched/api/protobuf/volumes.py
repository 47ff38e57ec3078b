"""Message tables of core/v1 volumes: Volume and the VolumeSource kinds that are encoded.

Field numbers from k8s.io/api core/v1/generated.proto, pointer-ness from core/v1/types.go.
"""

from __future__ import annotations

from wasmsched.api.protobuf.containers import (
    _LOCAL_OBJECT_REFERENCE,
    _OBJECT_FIELD_SELECTOR,
    _RESOURCE_FIELD_SELECTOR,
)
from wasmsched.api.protobuf.meta import _LABEL_SELECTOR, _OBJECT_META
from wasmsched.api.protobuf.schema import (
    DECODED,
    KEEP,
    OPT,
    _Message,
    b,
    i32,
    i64,
    inline,
    m,
    mq,
    mss,
    q,
    rm,
    rs,
    s,
)

_HOST_PATH = _Message("HostPathVolumeSource", s("path", 1, KEEP), s("type", 2, OPT))
_EMPTY_DIR = _Message(
    "EmptyDirVolumeSource", s("medium", 1), q("sizeLimit", 2, OPT), i32("mode", 3, OPT | DECODED)
)
_GCE_PD = _Message(
    "GCEPersistentDiskVolumeSource",
    s("pdName", 1, KEEP), s("fsType", 2), i32("partition", 3), b("readOnly", 4),
)  # fmt: skip
_AWS_EBS = _Message(
    "AWSElasticBlockStoreVolumeSource",
    s("volumeID", 1, KEEP), s("fsType", 2), i32("partition", 3), b("readOnly", 4),
)  # fmt: skip
_GIT_REPO = _Message(
    "GitRepoVolumeSource", s("repository", 1, KEEP), s("revision", 2), s("directory", 3)
)
_KEY_TO_PATH = _Message(
    "KeyToPath",
    s("key", 1, KEEP),
    s("path", 2, KEEP),
    i32("mode", 3, OPT),
    i64("user", 4, OPT | DECODED),
)
_SECRET_VOLUME = _Message(
    "SecretVolumeSource",
    s("secretName", 1), rm("items", 2, _KEY_TO_PATH),
    i32("defaultMode", 3, OPT), b("optional", 4, OPT), i64("defaultUser", 5, OPT | DECODED),
)  # fmt: skip
_NFS = _Message("NFSVolumeSource", s("server", 1, KEEP), s("path", 2, KEEP), b("readOnly", 3))
_ISCSI = _Message(
    "ISCSIVolumeSource",
    s("targetPortal", 1, KEEP), s("iqn", 2, KEEP), i32("lun", 3, KEEP), s("iscsiInterface", 4), s("fsType", 5),
    b("readOnly", 6), rs("portals", 7), b("chapAuthDiscovery", 8),
    m("secretRef", 10, _LOCAL_OBJECT_REFERENCE, OPT), b("chapAuthSession", 11),
    s("initiatorName", 12, OPT),
)  # fmt: skip
_PVC_VOLUME = _Message(
    "PersistentVolumeClaimVolumeSource", s("claimName", 1, KEEP), b("readOnly", 2)
)
_RBD = _Message(
    "RBDVolumeSource",
    rs("monitors", 1, KEEP), s("image", 2, KEEP), s("fsType", 3), s("pool", 4), s("user", 5),
    s("keyring", 6), m("secretRef", 7, _LOCAL_OBJECT_REFERENCE, OPT), b("readOnly", 8),
)  # fmt: skip
_CINDER = _Message(
    "CinderVolumeSource",
    s("volumeID", 1, KEEP), s("fsType", 2), b("readOnly", 3),
    m("secretRef", 4, _LOCAL_OBJECT_REFERENCE, OPT),
)  # fmt: skip
_DOWNWARD_API_FILE = _Message(
    "DownwardAPIVolumeFile",
    s("path", 1, KEEP),
    m("fieldRef", 2, _OBJECT_FIELD_SELECTOR, OPT),
    m("resourceFieldRef", 3, _RESOURCE_FIELD_SELECTOR, OPT),
    i32("mode", 4, OPT),
    i64("user", 5, OPT | DECODED),
)
_DOWNWARD_API_VOLUME = _Message(
    "DownwardAPIVolumeSource",
    rm("items", 1, _DOWNWARD_API_FILE),
    i32("defaultMode", 2, OPT),
    i64("defaultUser", 3, OPT | DECODED),
)
_AZURE_FILE = _Message(
    "AzureFileVolumeSource", s("secretName", 1, KEEP), s("shareName", 2, KEEP), b("readOnly", 3)
)
_CONFIG_MAP_VOLUME = _Message(
    "ConfigMapVolumeSource",
    inline(1, _LOCAL_OBJECT_REFERENCE), rm("items", 2, _KEY_TO_PATH),
    i32("defaultMode", 3, OPT), b("optional", 4, OPT), i64("defaultUser", 5, OPT | DECODED),
)  # fmt: skip
_AZURE_DISK = _Message(
    "AzureDiskVolumeSource",
    s("diskName", 1, KEEP), s("diskURI", 2, KEEP), s("cachingMode", 3, OPT), s("fsType", 4, OPT),
    b("readOnly", 5, OPT), s("kind", 6, OPT),
)  # fmt: skip
_SECRET_PROJECTION = _Message(
    "SecretProjection",
    inline(1, _LOCAL_OBJECT_REFERENCE), rm("items", 2, _KEY_TO_PATH), b("optional", 4, OPT),
)  # fmt: skip
_DOWNWARD_API_PROJECTION = _Message("DownwardAPIProjection", rm("items", 1, _DOWNWARD_API_FILE))
_CONFIG_MAP_PROJECTION = _Message(
    "ConfigMapProjection",
    inline(1, _LOCAL_OBJECT_REFERENCE), rm("items", 2, _KEY_TO_PATH), b("optional", 4, OPT),
)  # fmt: skip
_SERVICE_ACCOUNT_TOKEN_PROJECTION = _Message(
    "ServiceAccountTokenProjection",
    s("audience", 1), i64("expirationSeconds", 2, OPT), s("path", 3, KEEP),
    i64("user", 4, OPT | DECODED),
)  # fmt: skip
_CLUSTER_TRUST_BUNDLE_PROJECTION = _Message(
    "ClusterTrustBundleProjection",
    s("name", 1, OPT), s("signerName", 2, OPT), m("labelSelector", 3, _LABEL_SELECTOR, OPT),
    s("path", 4, KEEP), b("optional", 5, OPT), i64("user", 6, OPT | DECODED),
)  # fmt: skip
_VOLUME_PROJECTION = _Message(
    "VolumeProjection",
    m("secret", 1, _SECRET_PROJECTION, OPT),
    m("downwardAPI", 2, _DOWNWARD_API_PROJECTION, OPT),
    m("configMap", 3, _CONFIG_MAP_PROJECTION, OPT),
    m("serviceAccountToken", 4, _SERVICE_ACCOUNT_TOKEN_PROJECTION, OPT),
    m("clusterTrustBundle", 5, _CLUSTER_TRUST_BUNDLE_PROJECTION, OPT),
)
_PROJECTED_VOLUME = _Message(
    "ProjectedVolumeSource",
    rm("sources", 1, _VOLUME_PROJECTION, KEEP), i32("defaultMode", 2, OPT),
    i64("defaultUser", 3, OPT | DECODED),
)  # fmt: skip
_CSI_VOLUME = _Message(
    "CSIVolumeSource",
    s("driver", 1, KEEP), b("readOnly", 2, OPT), s("fsType", 3, OPT), mss("volumeAttributes", 4),
    m("nodePublishSecretRef", 5, _LOCAL_OBJECT_REFERENCE, OPT),
)  # fmt: skip
_TYPED_LOCAL_OBJECT_REFERENCE = _Message(
    "TypedLocalObjectReference",
    s("apiGroup", 1, OPT | KEEP),
    s("kind", 2, KEEP),
    s("name", 3, KEEP),
)
_TYPED_OBJECT_REFERENCE = _Message(
    "TypedObjectReference",
    s("apiGroup", 1, OPT | KEEP), s("kind", 2, KEEP), s("name", 3, KEEP), s("namespace", 4, OPT),
)  # fmt: skip
_VOLUME_RESOURCE_REQUIREMENTS = _Message(
    "VolumeResourceRequirements", mq("limits", 1), mq("requests", 2)
)
_PVC_SPEC = _Message(
    "PersistentVolumeClaimSpec",
    rs("accessModes", 1), m("resources", 2, _VOLUME_RESOURCE_REQUIREMENTS), s("volumeName", 3),
    m("selector", 4, _LABEL_SELECTOR, OPT), s("storageClassName", 5, OPT),
    s("volumeMode", 6, OPT), m("dataSource", 7, _TYPED_LOCAL_OBJECT_REFERENCE, OPT),
    m("dataSourceRef", 8, _TYPED_OBJECT_REFERENCE, OPT),
    s("volumeAttributesClassName", 9, OPT),
)  # fmt: skip
_PVC_TEMPLATE = _Message(
    "PersistentVolumeClaimTemplate", m("metadata", 1, _OBJECT_META), m("spec", 2, _PVC_SPEC)
)
_EPHEMERAL_VOLUME = _Message(
    "EphemeralVolumeSource", m("volumeClaimTemplate", 1, _PVC_TEMPLATE, OPT)
)
_IMAGE_VOLUME = _Message("ImageVolumeSource", s("reference", 1), s("pullPolicy", 2))
_VOLUME_SOURCE = _Message(
    "VolumeSource",
    m("hostPath", 1, _HOST_PATH, OPT),
    m("emptyDir", 2, _EMPTY_DIR, OPT),
    m("gcePersistentDisk", 3, _GCE_PD, OPT),
    m("awsElasticBlockStore", 4, _AWS_EBS, OPT),
    m("gitRepo", 5, _GIT_REPO, OPT),
    m("secret", 6, _SECRET_VOLUME, OPT),
    m("nfs", 7, _NFS, OPT),
    m("iscsi", 8, _ISCSI, OPT),
    m("persistentVolumeClaim", 10, _PVC_VOLUME, OPT),
    m("rbd", 11, _RBD, OPT),
    m("cinder", 13, _CINDER, OPT),
    m("downwardAPI", 16, _DOWNWARD_API_VOLUME, OPT),
    m("azureFile", 18, _AZURE_FILE, OPT),
    m("configMap", 19, _CONFIG_MAP_VOLUME, OPT),
    m("azureDisk", 22, _AZURE_DISK, OPT),
    m("projected", 26, _PROJECTED_VOLUME, OPT),
    m("csi", 28, _CSI_VOLUME, OPT),
    m("ephemeral", 29, _EPHEMERAL_VOLUME, OPT),
    m("image", 30, _IMAGE_VOLUME, OPT),
)
_VOLUME = _Message("Volume", s("name", 1, KEEP), inline(2, _VOLUME_SOURCE))
