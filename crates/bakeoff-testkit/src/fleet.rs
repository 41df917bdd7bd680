//! Fleet files for tests: the one `[[seat]]` table every seat test starts from.

/// The `[[seat]]` header of a fleet file: `name`, `engine`, `role`, `port` and one served name.
/// The caller appends the seat's other keys and its `[seat.process]` or `[seat.docker]` table.
pub fn seat_header(name: &str, engine: &str, role: &str, port: u16, served: &str) -> String {
    format!(
        "\n[[seat]]\nname = \"{name}\"\nengine = \"{engine}\"\nrole = \"{role}\"\nport = {port}\nserved_model_names = [\"{served}\"]\n"
    )
}
