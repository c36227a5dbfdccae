"""A throwaway certificate authority and server certificate for a service that answers TLS.

A service with ``tls = true`` (:class:`repogate.contract.Service`) is reached by tests that swap
``http://`` for ``https://`` on its loopback address; its front (inside the sandbox, in
:mod:`repogate.oracles._services_launch`) needs a certificate the tests' client verifies. For
every test run the harness makes a new CA and one server certificate it signs, for the IP address
``127.0.0.1`` and the DNS name ``localhost`` (subjectAltName entries of both kinds, RFC 5280
4.2.1.6: a client checks an IP address only against an IP entry, RFC 6125 does the rest).

- The CA's private key lives only in this process's memory: it signs the server certificate and
  is dropped, never written anywhere, so nothing in the sandbox can sign another certificate the
  tests would trust. The server's key is written beside its certificate (the front must read it).
- Both certificates are valid from 1970-01-01 to 9999-12-31 23:59:59 UTC (RFC 5280 4.1.2.5: the
  "no well-defined expiration" value), so a run under a faked clock (libfaketime: the date check
  runs ten years ahead, :mod:`repogate.tasks.dates`) or a base date years back still verifies.
- Keys are ECDSA P-256 (fast to make; every TLS 1.2 client of the last decade accepts them); the
  extensions are those a strict verifier (OpenSSL's ``X509_V_FLAG_X509_STRICT``, Python 3.13's
  default context) asks for: basicConstraints and keyUsage critical, key identifiers both ways,
  serverAuth in extendedKeyUsage.

Made with pyca/cryptography (https://cryptography.io), a maintained library, rather than own
ASN.1 or signing code.
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from repogate._files import write_bytes_nofollow

NOT_BEFORE = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
"""Start of both certificates' validity: before any base commit's date."""
NOT_AFTER = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.UTC)
"""End of both certificates' validity (RFC 5280 4.1.2.5, no well-defined expiration)."""
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE")
"""The variables pointed at the CA file for the tests (requests, OpenSSL's default file, curl)."""


@dataclass(frozen=True)
class TlsFiles:
    """The files of one run's TLS material, all under one harness-owned folder.

    Attributes:
        ca: the CA certificate (PEM): what the tests trust.
        cert: the server certificate (PEM), signed by the CA.
        key: the server's private key (PEM, PKCS#8, unencrypted), read by the front.
        ca_sha256: sha256 (hex) of the CA certificate's DER bytes: recorded in the run's services.
    """

    ca: Path
    cert: Path
    key: Path
    ca_sha256: str


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "repogate harness"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _usage(*, signs: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not signs,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs,
        crl_sign=signs,
        encipher_only=False,
        decipher_only=False,
    )


def make(folder: Path, name: str = "localhost") -> TlsFiles:
    """Make a new CA and a server certificate for ``127.0.0.1``/``localhost``; write them.

    Args:
        folder: an existing harness-owned folder; ``ca.pem``, ``server.pem`` and ``server.key``
            are written into it (a link already there is replaced, never followed).
        name: the server certificate's common name (shown by tools; not what a client checks).

    Returns:
        The files and the CA's fingerprint. The CA's private key is not among them: it is never
        written.
    """
    ca_key = ec.generate_private_key(ec.SECP256R1())
    server_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("repogate throwaway CA")
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOT_BEFORE)
        .not_valid_after(NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(signs=True), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    san = x509.SubjectAlternativeName(
        [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    )
    server = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOT_BEFORE)
        .not_valid_after(NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(signs=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(san, critical=False)
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(server_key.public_key()), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    del ca_key  # the CA signs nothing more
    pem = serialization.Encoding.PEM
    key_bytes = server_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    write_bytes_nofollow(folder, "ca.pem", ca.public_bytes(pem))
    write_bytes_nofollow(folder, "server.pem", server.public_bytes(pem))
    write_bytes_nofollow(folder, "server.key", key_bytes)
    return TlsFiles(
        ca=folder / "ca.pem",
        cert=folder / "server.pem",
        key=folder / "server.key",
        ca_sha256=hashlib.sha256(ca.public_bytes(serialization.Encoding.DER)).hexdigest(),
    )


def bundle_with_ca(original: bytes, files: TlsFiles, folder: Path, label: str) -> Path:
    """Write ``original`` (a CA bundle's bytes) with the harness CA appended; return its path.

    Args:
        original: the bundle as the checkout holds it.
        files: this run's TLS material.
        folder: the harness-owned folder to write into.
        label: the file's name there.
    """
    joined = original + (b"" if original.endswith(b"\n") or not original else b"\n")
    write_bytes_nofollow(folder, label, joined + files.ca.read_bytes())
    return folder / label
