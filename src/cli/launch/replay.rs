//! A run on the `replay` provider (a rerun): the recorded run it answers from, the
//! provider reading it, and the assets the recording's gate knew.

use std::path::Path;
use std::sync::Arc;

use color_eyre::eyre::{Result, WrapErr};

use super::config::RunConfig;
use crate::data::provider::replay::{ReplayProvider, ReplaySource};
use crate::data::provider::Provider;
use crate::data::store::read::asset_ids;
use crate::data::store::Store;
use crate::model::gate::known::AssetIds;

/// The recorded run a run replays, when it is a rerun still on the replay provider
/// (`plexus resume --provider NAME` moves a rerun to a real provider).
pub fn replay_source(config: &RunConfig) -> Option<&ReplaySource> {
    config
        .replay
        .as_ref()
        .filter(|_| config.provider == "replay")
}

/// The replay provider for `source`.
pub fn replay_provider(source: &ReplaySource) -> Result<Arc<dyn Provider>> {
    let p = ReplayProvider::open(source)
        .wrap_err_with(|| format!("cannot open the recorded run {}", source.run_id))?;
    Ok(Arc::new(p))
}

/// The asset ids the recorded run's gate knew when it started: the imported ones and
/// those of runs created before it (not its own, nor later runs'), plus the atoms
/// `resumed`, a rerun being resumed in `db`, accepted so far.
pub fn known_assets_of(
    source: &ReplaySource,
    db: &Path,
    resumed: Option<&str>,
) -> Result<AssetIds> {
    let store = Store::open(&source.db)?;
    let mut known = asset_ids(
        store.conn(),
        "SELECT DISTINCT atom_id FROM knowledge_atoms
         WHERE run_id IS NULL OR run_id IN (SELECT run_id FROM runs
               WHERE created_at < (SELECT created_at FROM runs WHERE run_id = ?1))",
        [&source.run_id],
    )?;
    if let Some(run) = resumed {
        let store = Store::open(db)?;
        let mut st = store
            .conn()
            .prepare("SELECT DISTINCT atom_id FROM knowledge_atoms WHERE run_id = ?1")?;
        let rows = st.query_map([run], |r| r.get::<_, String>(0))?;
        for id in rows {
            known.insert(&id?);
        }
    }
    Ok(known)
}
