//! `physiojudge admin`: what the platform's operator does on the server machine without
//! the server running — above all, the first organiser account and its token
//! (docs/architecture.md, "Command-line contract"; docs/service.md, "HTTP API").

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct AdminArgs {
    /// The state folder (its SQLite database, unless --database names another).
    #[arg(long)]
    pub state: PathBuf,
    /// The database: postgres://…, sqlite:PATH or a path (default: the state folder's
    /// SQLite file).
    #[arg(long)]
    pub database: Option<String>,
    #[command(subcommand)]
    pub command: AdminCommand,
}

#[derive(Subcommand)]
pub enum AdminCommand {
    /// Accounts.
    #[command(subcommand)]
    User(UserCommand),
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Creates an account and prints a token for it (shown once) on stdout.
    Add {
        /// The account's name.
        name: String,
        /// An organiser (default: a participant).
        #[arg(long)]
        organiser: bool,
    },
}

pub fn run(a: AdminArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        let store = crate::serve_cmd::open_store(&a.state, a.database.as_deref()).await?;
        let result = match a.command {
            AdminCommand::User(UserCommand::Add { name, organiser }) => {
                let role = if organiser {
                    store::Role::Organiser
                } else {
                    store::Role::Participant
                };
                let user = store
                    .create_user(&name, role, None)
                    .await
                    .with_context(|| format!("creating user {name:?}"))?;
                let token = store
                    .issue_token(user.id, "physiojudge admin user add")
                    .await
                    .context("issuing a token")?;
                eprintln!(
                    "user {:?} ({}) created, id {}; its token (shown once, kept hashed):",
                    user.name, user.role, user.id
                );
                writeln!(out, "{}", token.token)?;
                Ok(())
            }
        };
        store.close().await;
        result
    })
}
