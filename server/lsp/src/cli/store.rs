//! `--store redis://HOST:PORT[/DB][?prefix=PREFIX]`: the session named on the command line is one
//! omp keeps in Redis (its path as omp names it) instead of a local file. Credentials never go on
//! the command line or into the address: `--store-user` names the ACL user and the password is
//! read from the environment variable `--store-password-env` names (default
//! `SESSIONTREE_REDIS_PASSWORD`).

use sessiontree_core::{OpenOptions, Session};
use sessiontree_redis::{Link, RedisStore, StoreAddress};
use std::path::Path;
use std::sync::Arc;

/// The store options shared by the subcommands that read a session.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StoreArgs {
    /// Read the session from omp's Redis store at this address
    /// (`redis://HOST:PORT[/DB][?prefix=PREFIX]`, `rediss://` for TLS); the session argument is
    /// then its path as omp names it.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// The store's ACL user.
    #[arg(long, value_name = "USER", requires = "store")]
    pub store_user: Option<String>,
    /// The environment variable holding the store's password.
    #[arg(long, value_name = "VAR", default_value = "SESSIONTREE_REDIS_PASSWORD")]
    pub store_password_env: String,
    /// For a `rediss://` store whose certificate a private CA signed: that CA's certificate (PEM),
    /// checked against instead of the public certificate authorities.
    #[arg(long, value_name = "FILE", requires = "store")]
    pub store_ca_file: Option<std::path::PathBuf>,
}

impl StoreArgs {
    /// Opens `file` from the store, or as a local file when no store is named.
    pub fn open(
        &self,
        file: &Path,
        options: OpenOptions,
    ) -> Result<Session, super::anyhow_like::Error> {
        let Some(url) = &self.store else {
            return Ok(Session::open(file, options)?);
        };
        let address = StoreAddress::parse(url).map_err(super::anyhow_like::Error::Usage)?;
        let password = std::env::var(&self.store_password_env).ok();
        let address = address
            .with_credentials(self.store_user.clone(), password)
            .with_ca_file(self.store_ca_file.clone());
        let link = Link::new(address).map_err(super::anyhow_like::Error::Output)?;
        let store = Arc::new(RedisStore::new(link, file));
        Ok(Session::open_store(store, options)?)
    }
}
