//! `campaign run|status|restore`: the campaign file loaded and validated before anything starts.

use std::path::PathBuf;

use bakeoff_campaign::Campaign;
use bakeoff_campaign::run::RunOptions;

use crate::FlagError;
use crate::cli::{CampaignDirArgs, CampaignRestoreArgs, CampaignRunArgs};

#[derive(Debug)]
pub struct CampaignRunConfig {
    pub campaign: Campaign,
    pub options: RunOptions,
    pub dry_run: bool,
    pub json: bool,
}

impl CampaignRunArgs {
    pub fn validate(self) -> Result<CampaignRunConfig, FlagError> {
        let watch = self.watch.validate()?;
        let mut campaign = Campaign::load(&self.file)?;
        // --out wins over the file's `out` (docs/campaign.md).
        if let Some(out) = self.out {
            campaign.out = out;
        }
        if self.dry_run && self.fresh {
            return Err(FlagError::invalid(
                "--dry-run starts nothing and --fresh moves files: give one of them",
            ));
        }
        let allow_contaminated = super::allow_contaminated(&self.allow, "campaign run")?;
        let only: Vec<String> = self
            .only
            .into_iter()
            .filter(|s| !s.trim().is_empty())
            .collect();
        // An unknown name is refused before anything starts, a dry run's too.
        bakeoff_campaign::run::select(&campaign, &only)?;
        Ok(CampaignRunConfig {
            campaign,
            options: RunOptions {
                allow_contaminated,
                ceilings: Default::default(),
                confirm: self.confirm,
                fresh: self.fresh,
                only,
                watch,
                suite_options: Default::default(),
                nvidia_smi: self.nvidia_smi,
            },
            dry_run: self.dry_run,
            json: self.json,
        })
    }
}

#[derive(Debug)]
pub struct CampaignRestoreConfig {
    pub dir: PathBuf,
    pub campaign: Campaign,
    pub options: RunOptions,
}

impl CampaignRestoreArgs {
    /// The campaign file is the one the journal names (its first `campaign-started` line).
    pub fn validate(self) -> Result<CampaignRestoreConfig, FlagError> {
        let watch = self.watch.validate()?;
        let file = bakeoff_campaign::journal::campaign_file(&self.dir)?;
        let mut campaign = Campaign::load(&file)?;
        // The directory named is the one recovered, wherever the file's `out` points now.
        campaign.out = self.dir.clone();
        // The rewritten record keeps the `--allow contaminated` the run was given.
        let allow_contaminated = bakeoff_artifact::read_versioned::<
            bakeoff_artifact::campaign::CampaignRecord,
        >(&self.dir.join(bakeoff_campaign::record::RECORD))
        .is_ok_and(|r| r.allow_contaminated);
        Ok(CampaignRestoreConfig {
            dir: self.dir,
            campaign,
            options: RunOptions {
                confirm: true,
                fresh: false,
                only: vec![],
                watch,
                suite_options: Default::default(),
                nvidia_smi: "nvidia-smi".into(),
                allow_contaminated,
                ceilings: Default::default(),
            },
        })
    }
}

#[derive(Debug)]
pub struct CampaignStatusConfig {
    pub dir: PathBuf,
    pub json: bool,
    /// `--allow contaminated`: the verdicts the run withheld are rendered.
    pub allow_contaminated: bool,
}

impl CampaignDirArgs {
    pub fn validate(self) -> Result<CampaignStatusConfig, FlagError> {
        Ok(CampaignStatusConfig {
            allow_contaminated: super::allow_contaminated(&self.allow, "campaign status")?,
            dir: self.dir,
            json: self.json,
        })
    }
}
