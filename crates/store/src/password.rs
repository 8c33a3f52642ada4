//! Argon2id password hashes in the PHC string format, computed in memory that a
//! hashing thread keeps and reuses.
//!
//! Why not `Argon2::hash_password` / `verify_password`: each call allocates the
//! algorithm's memory (19 MiB at the default cost) and frees it after. glibc raises its
//! mmap threshold after freeing a block that large, so the next ones come from the
//! threads' heaps, which fragment and keep their pages: a burst of sign-ins then left
//! the server ~200 MB larger (BENCHMARKS.md). Here each hashing thread allocates its
//! blocks once, on its first hash, and every later hash on that thread fills the same
//! blocks, so memory is bounded by the number of hashing threads whatever the
//! allocator does.
//!
//! The strings written and read are the ones the crate's own `PasswordHasher` writes
//! (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), so hashes stored before stay valid
//! and a hash written here can be checked by any argon2 implementation.

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};

use crate::Error;

/// Salt length in bytes: the PHC format's recommendation (16 bytes, 22 base64 digits).
const SALT_LEN: usize = 16;

/// One hashing thread's argon2 memory. Empty until the first hash, so a store that
/// never hashes (a worker's, a test's) never holds it.
#[derive(Default)]
pub(crate) struct Memory {
    blocks: Vec<Block>,
}

impl Memory {
    /// At least `count` blocks, grown (once, to the largest cost seen) if needed.
    /// Argon2 writes each block before it reads it, so what a previous hash left in
    /// them does not matter.
    fn blocks(&mut self, count: usize) -> Result<&mut [Block], Error> {
        if self.blocks.len() < count {
            self.blocks
                .try_reserve_exact(count - self.blocks.len())
                .map_err(|_| Error::Password("no memory for the password hash".into()))?;
            self.blocks.resize(count, Block::new());
        }
        Ok(&mut self.blocks[..count])
    }
}

/// The argon2id hash of `password` with a fresh random salt and the default cost, as a
/// PHC string.
pub(crate) fn hash(memory: &mut Memory, password: &[u8]) -> Result<String, Error> {
    let mut salt = [0u8; SALT_LEN];
    getrandom::fill(&mut salt).map_err(|e| Error::Random(e.to_string()))?;
    let params = Params::default();
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    let mut out = [0u8; Params::DEFAULT_OUTPUT_LEN];
    argon2
        .hash_password_into_with_memory(
            password,
            &salt,
            &mut out,
            memory.blocks(params.block_count())?,
        )
        .map_err(|e| Error::Password(e.to_string()))?;
    let phc = |e: argon2::password_hash::phc::Error| Error::Password(e.to_string());
    let hash = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params).map_err(|e| Error::Password(e.to_string()))?,
        salt: Some(Salt::new(&salt).map_err(phc)?),
        hash: Some(Output::new(&out).map_err(phc)?),
    };
    Ok(hash.to_string())
}

/// Whether `password` is the one `stored` (a PHC string this crate wrote) was made
/// from. The algorithm, version, cost, salt and output length are the stored ones; the
/// outputs are compared in constant time. A string that is not such a hash is
/// [`Error::Corrupt`], never a match.
pub(crate) fn verify(memory: &mut Memory, password: &[u8], stored: &str) -> Result<bool, Error> {
    let corrupt = |what: &str| Error::Corrupt(format!("stored password hash: {what}"));
    let parsed = PasswordHash::new(stored).map_err(|e| corrupt(&e.to_string()))?;
    let algorithm =
        Algorithm::new(parsed.algorithm.as_str()).map_err(|e| corrupt(&e.to_string()))?;
    let version = match parsed.version {
        Some(v) => Version::try_from(v).map_err(|e| corrupt(&e.to_string()))?,
        // The PHC format lets the version be left out; argon2 then means 1.3.
        None => Version::default(),
    };
    // Reads m, t, p (and keyid/data) and takes the output length from the stored hash.
    let params = Params::try_from(&parsed).map_err(|e| corrupt(&e.to_string()))?;
    let (Some(salt), Some(expected)) = (&parsed.salt, &parsed.hash) else {
        return Err(corrupt("no salt or no hash"));
    };
    let mut out = vec![0u8; expected.len()];
    Argon2::new(algorithm, version, params.clone())
        .hash_password_into_with_memory(
            password,
            salt.as_ref(),
            &mut out,
            memory.blocks(params.block_count())?,
        )
        .map_err(|e| Error::Password(e.to_string()))?;
    let computed = Output::new(&out).map_err(|e| corrupt(&e.to_string()))?;
    // `Output`'s equality is constant-time (it compares every byte whatever differs).
    Ok(computed == *expected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::password_hash::{PasswordHasher, PasswordVerifier};

    #[test]
    fn a_hash_checks_with_the_crate_verifier_and_back() {
        let mut m = Memory::default();
        let ours = hash(&mut m, b"long enough pass").unwrap();
        assert!(
            ours.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{ours}"
        );
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(
            Argon2::default()
                .verify_password(b"long enough pass", &parsed)
                .is_ok()
        );
        assert!(
            Argon2::default()
                .verify_password(b"long enough pasS", &parsed)
                .is_err()
        );

        // A hash the crate's own hasher wrote (what the store kept before) checks here.
        let theirs = Argon2::default()
            .hash_password(b"another password")
            .unwrap()
            .to_string();
        assert!(verify(&mut m, b"another password", &theirs).unwrap());
        assert!(!verify(&mut m, b"another passwore", &theirs).unwrap());
        // The reused memory does not carry one check into the next.
        assert!(verify(&mut m, b"long enough pass", &ours).unwrap());
        assert!(!verify(&mut m, b"", &ours).unwrap());
    }

    #[test]
    fn other_costs_and_versions_are_read_from_the_string() {
        let mut m = Memory::default();
        let small = Params::new(64, 3, 2, Some(24)).unwrap();
        let h = Argon2::new(Algorithm::Argon2i, Version::V0x10, small)
            .hash_password(b"pw")
            .unwrap()
            .to_string();
        assert!(verify(&mut m, b"pw", &h).unwrap());
        assert!(!verify(&mut m, b"pv", &h).unwrap());
        // A larger cost than the default grows the memory once.
        let big = Params::new(20 * 1024, 1, 1, None).unwrap();
        let h = Argon2::new(Algorithm::Argon2id, Version::V0x13, big)
            .hash_password(b"pw")
            .unwrap()
            .to_string();
        assert!(verify(&mut m, b"pw", &h).unwrap());
        assert_eq!(m.blocks.len(), 20 * 1024);
    }

    #[test]
    fn a_string_that_is_no_hash_is_corrupt_not_a_match() {
        let mut m = Memory::default();
        for bad in [
            "",
            "plain text",
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ",
            "$bcrypt$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
            "$argon2id$v=7$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
        ] {
            assert!(
                matches!(verify(&mut m, b"pw", bad), Err(Error::Corrupt(_))),
                "{bad:?}"
            );
        }
    }
}
