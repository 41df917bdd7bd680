//! `bakeoff schema [NAME]`: the JSON Schemas bakeoff ships (schemas/), listed, or one printed
//! as the checked-in file holds it.

use bakeoff_flags::FlagError;
use bakeoff_flags::cli::SchemaArgs;

use crate::exit::{Error, Exit};

/// One shipped schema: the name `bakeoff schema NAME` takes, its file under schemas/, what it
/// describes, and the schema itself.
pub struct Shipped {
    pub name: &'static str,
    pub file: &'static str,
    pub what: &'static str,
    pub schema: fn() -> serde_json::Value,
}

fn verdict() -> serde_json::Value {
    bakeoff_artifact::evidence::json_schemas()[0].1.clone()
}

fn retraction() -> serde_json::Value {
    bakeoff_artifact::evidence::json_schemas()[1].1.clone()
}

fn cache_audit() -> serde_json::Value {
    serde_json::to_value(bakeoff_cache::audit::json_schema()).unwrap_or(serde_json::Value::Null)
}

/// Every schema in schemas/, in the order `bakeoff schema` lists them.
pub const SHIPPED: &[Shipped] = &[
    Shipped {
        name: "artifact",
        file: "artifact.v1.schema.json",
        what: "a run's artifact: <slug>.bakeoff.json and <slug>.failure.json",
        schema: bakeoff_artifact::json_schema,
    },
    Shipped {
        name: "campaign",
        file: "campaign.v1.schema.json",
        what: "a campaign's record: campaign.json",
        schema: bakeoff_artifact::campaign::json_schema,
    },
    Shipped {
        name: "verdict",
        file: "verdict.v1.schema.json",
        what: "a verdict record (bakeoff verdict)",
        schema: verdict,
    },
    Shipped {
        name: "retraction",
        file: "retraction.v1.schema.json",
        what: "a retraction record (bakeoff retract)",
        schema: retraction,
    },
    Shipped {
        name: "monitor",
        file: "monitor.v1.schema.json",
        what: "a seat monitor's summary: <fleet>.monitor.json",
        schema: bakeoff_artifact::monitor::monitor_json_schema,
    },
    Shipped {
        name: "seat-start",
        file: "seat-start.v1.schema.json",
        what: "a seat start's record: <seat>.seat.json",
        schema: bakeoff_artifact::seat::seat_start_json_schema,
    },
    Shipped {
        name: "cache-audit",
        file: "cache-audit.v1.schema.json",
        what: "bakeoff audit cache --json",
        schema: cache_audit,
    },
    Shipped {
        name: "fleet-file",
        file: "fleet-file.schema.json",
        what: "the fleet file you write (TOML): hosts, seats, routes, gateway",
        schema: bakeoff_seats::fleet::file_json_schema,
    },
    Shipped {
        name: "campaign-file",
        file: "campaign-file.schema.json",
        what: "the campaign file you write (TOML): campaign and candidates",
        schema: bakeoff_campaign::file::file_json_schema,
    },
];

/// The schema named, as the file under schemas/ holds it (pretty JSON).
pub fn text(s: &Shipped) -> Result<String, Error> {
    serde_json::to_string_pretty(&(s.schema)()).map_err(Error::json)
}

pub fn run(a: SchemaArgs) -> Result<Exit, Error> {
    let Some(name) = a.name else {
        stdoutln!("The JSON Schemas bakeoff ships (bakeoff schema NAME prints one):");
        for s in SHIPPED {
            stdoutln!("  {:<14} {:<27} {}", s.name, s.file, s.what);
        }
        stdoutln!("(`bakeoff schema artifact` prints what `bakeoff schema` alone printed before.)");
        return Ok(Exit::Ok);
    };
    let wanted = name.trim_end_matches(".json");
    let found = SHIPPED
        .iter()
        .find(|s| s.name == wanted || s.file.trim_end_matches(".json") == wanted);
    match found {
        Some(s) => {
            stdoutln!("{}", text(s)?);
            Ok(Exit::Ok)
        }
        None => Err(FlagError::invalid(format!(
            "no schema named {name:?}: use one of {} (bakeoff schema lists them)",
            SHIPPED
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Every file in schemas/ is listed, and `bakeoff schema NAME` prints what the file holds.
    /// The fleet and campaign files' schemas are regenerated with
    /// `BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff --bin bakeoff schema`.
    #[test]
    fn every_shipped_schema_is_listed_and_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = SHIPPED.iter().map(|s| s.file.to_string()).collect();
        listed.sort();
        for s in SHIPPED {
            let generated = text(s).unwrap() + "\n";
            let path = dir.join(s.file);
            if std::env::var_os("BAKEOFF_UPDATE_SCHEMA").is_some() && s.name.ends_with("-file") {
                std::fs::write(&path, &generated).unwrap();
                if !on_disk.contains(&s.file.to_string()) {
                    on_disk.push(s.file.to_string());
                    on_disk.sort();
                }
            }
            let file = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                file == generated,
                "schemas/{} differs from `bakeoff schema {}`; regenerate with \
                 BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff --bin bakeoff schema \
                 (the fleet and campaign files) or the crate test its type lives in",
                s.file,
                s.name
            );
        }
        assert_eq!(
            on_disk, listed,
            "schemas/ and `bakeoff schema`'s list differ"
        );
    }

    /// The shipped examples are valid against the fleet and campaign files' schemas, as an
    /// editor would check them.
    #[test]
    fn the_examples_are_valid_against_the_file_schemas() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for (name, file) in [
            ("fleet-file", "examples/fleet.toml"),
            ("fleet-file", "examples/campaign/fleet.toml"),
            ("campaign-file", "examples/campaign/campaign.toml"),
        ] {
            let shipped = SHIPPED.iter().find(|s| s.name == name).unwrap();
            let schema = (shipped.schema)();
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let value: toml::Value = toml::from_str(&text).unwrap();
            let json = serde_json::to_value(value).unwrap();
            let validator = jsonschema::validator_for(&schema).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&json)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{file} against {name}: {errors:?}");
            // And a key the file may not have is refused, as the parser refuses it.
            let mut wrong = json.clone();
            wrong["no_such_key"] = serde_json::json!(1);
            assert!(
                !validator.is_valid(&wrong),
                "{name} accepted an unknown key"
            );
        }
    }
}
