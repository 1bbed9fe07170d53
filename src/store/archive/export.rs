//! A stored recording written as an export file's bytes, checked as an
//! import would check them.

use std::collections::BTreeMap;

use reprise_models::RecordingBundle;

use super::{FrameImage, decode, encode_with_versions};

/// A stored recording as an export file's bytes (what `export` writes).
pub fn export_bytes(store: &crate::store::Store, id: &str) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context as _;
    let bundle = store
        .load(id)
        .with_context(|| format!("read recording {id}"))?;
    export(store, &bundle)
}

/// A loaded recording as an export file's bytes, its frames read from
/// `store` as they are kept there (key frames whole, the others as patches
/// of them), checked as an import would check them.
pub fn export(store: &crate::store::Store, bundle: &RecordingBundle) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context as _;
    let id = &bundle.recording.id;
    let mut images = BTreeMap::new();
    for screenshot in &bundle.screenshots {
        let hash = &screenshot.content_hash;
        if images.contains_key(hash) {
            continue;
        }
        let image = store.image_as_stored(hash)?;
        if let FrameImage::Patch { base_hash, .. } = &image
            && !images.contains_key(base_hash)
        {
            images.insert(base_hash.clone(), store.image_as_stored(base_hash)?);
        }
        images.insert(hash.clone(), image);
    }
    let bytes = encode_with_versions(bundle, &images, &store.versions(id)?);
    // What import would refuse is not written: a damaged stored image (or
    // anything else import checks) fails the export, naming it.
    decode(&bytes).with_context(|| {
        format!(
            "export recording {id}: the store holds something an import would refuse, so nothing was written"
        )
    })?;
    Ok(bytes)
}
