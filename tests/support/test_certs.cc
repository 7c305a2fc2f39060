#include "tests/support/test_certs.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>

namespace uvsched::test {
namespace {

EVP_PKEY* new_key() { return EVP_EC_gen("P-256"); }

bool add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) return false;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return true;
}

// issuer/issuer_key null: self-signed.
X509* make_cert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key, bool ca, const char* san,
                const char* eku = nullptr) {
  static long serial = 1;
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 7 * 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert;
  add_ext(cert, signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (ca) add_ext(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  add_ext(cert, signer, NID_subject_key_identifier, "hash");
  if (!ca) add_ext(cert, signer, NID_authority_key_identifier, "keyid");
  if (san) add_ext(cert, signer, NID_subject_alt_name, san);
  if (eku) add_ext(cert, signer, NID_ext_key_usage, eku);
  X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256());
  return cert;
}

bool write_pem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  bool ok =
      cert ? PEM_write_X509(f, cert) == 1 : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  return ok;
}

}  // namespace

struct TestCerts::Pki {
  EVP_PKEY* ca_key = nullptr;
  X509* ca = nullptr;
  EVP_PKEY* stranger_key = nullptr;
  X509* stranger = nullptr;
  ~Pki() {
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    X509_free(stranger);
    EVP_PKEY_free(stranger_key);
  }
};

TestCerts::TestCerts() : pki_(new Pki) {
  char tmpl[] = "/tmp/uvsched-certs-XXXXXX";
  if (!mkdtemp(tmpl)) return;
  dir_ = tmpl;
  pki_->ca_key = new_key();
  pki_->ca = make_cert(pki_->ca_key, "uvsched test CA", nullptr, nullptr, true, nullptr);
  pki_->stranger_key = new_key();
  pki_->stranger = make_cert(pki_->stranger_key, "stranger CA", nullptr, nullptr, true, nullptr);
  EVP_PKEY* key = new_key();
  X509* server =
      make_cert(key, "uvsched", pki_->ca, pki_->ca_key, false, "IP:127.0.0.1,IP:::1,DNS:localhost", "serverAuth");
  ok_ = write_pem(ca_file(), pki_->ca, nullptr) && write_pem(stranger_ca_file(), pki_->stranger, nullptr) &&
        write_pem(server_cert(), server, nullptr) && write_pem(server_key(), nullptr, key);
  X509_free(server);
  EVP_PKEY_free(key);
}

TestCerts::~TestCerts() {
  delete pki_;
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string TestCerts::client_cert(const std::string& common_name, bool by_stranger, ClientKind kind) {
  EVP_PKEY* key = new_key();
  X509* issuer = by_stranger ? pki_->stranger : pki_->ca;
  EVP_PKEY* issuer_key = by_stranger ? pki_->stranger_key : pki_->ca_key;
  X509* cert = make_cert(key, common_name, issuer, issuer_key, kind == ClientKind::kCa, nullptr,
                         kind == ClientKind::kServerOnly ? "serverAuth"
                         : kind == ClientKind::kNoUsage  ? nullptr
                                                         : "clientAuth");
  const char* suffix = kind == ClientKind::kCa           ? "-ca"
                       : kind == ClientKind::kServerOnly ? "-server-only"
                       : kind == ClientKind::kNoUsage    ? "-no-usage"
                                                         : "";
  std::string base = dir_ + "/client-" + common_name + (by_stranger ? "-stranger" : "") + suffix;
  bool ok = write_pem(base + ".pem", cert, nullptr) && write_pem(base + "-key.pem", nullptr, key);
  X509_free(cert);
  EVP_PKEY_free(key);
  return ok ? base + ".pem" : std::string{};
}

std::string TestCerts::crl_file(const std::string& name, const std::vector<std::string>& revoked_certs) {
  X509_CRL* crl = X509_CRL_new();
  X509_CRL_set_version(crl, 1);  // v2
  X509_CRL_set_issuer_name(crl, X509_get_subject_name(pki_->ca));
  ASN1_TIME* now = ASN1_TIME_adj(nullptr, time(nullptr), 0, -60);
  ASN1_TIME* next = ASN1_TIME_adj(nullptr, time(nullptr), 7, 0);
  X509_CRL_set1_lastUpdate(crl, now);
  X509_CRL_set1_nextUpdate(crl, next);
  bool ok = true;
  for (const auto& path : revoked_certs) {
    FILE* f = std::fopen(path.c_str(), "r");
    X509* cert = f ? PEM_read_X509(f, nullptr, nullptr, nullptr) : nullptr;
    if (f) std::fclose(f);
    if (!cert) {
      ok = false;
      continue;
    }
    X509_REVOKED* r = X509_REVOKED_new();
    X509_REVOKED_set_serialNumber(r, X509_get_serialNumber(cert));
    X509_REVOKED_set_revocationDate(r, now);
    X509_CRL_add0_revoked(crl, r);
    X509_free(cert);
  }
  X509_CRL_sort(crl);
  ok = ok && X509_CRL_sign(crl, pki_->ca_key, EVP_sha256()) > 0;
  std::string path = dir_ + "/" + name;
  FILE* f = std::fopen(path.c_str(), "w");
  ok = ok && f && PEM_write_X509_CRL(f, crl) == 1;
  if (f) std::fclose(f);
  ASN1_TIME_free(now);
  ASN1_TIME_free(next);
  X509_CRL_free(crl);
  return ok ? path : std::string{};
}

}  // namespace uvsched::test
