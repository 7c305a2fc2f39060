// OpenSSL's libssl and libcrypto, opened with dlopen the first time a TLS
// context is made instead of linked. Only mapping them costs ~1.7 MiB of
// resident pages (their relocations are written at load), a fifth of the
// daemon's idle RSS, for a feature that is off unless configured.
//
// The calls go through a table of pointers whose types are taken from
// OpenSSL's own headers, so a mismatch is a compile error, not a crash.
#pragma once

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <string>

// Every OpenSSL function TLS calls. Macros of OpenSSL's (SSL_CTX_set_min_proto_version,
// SSL_set_tlsext_host_name, BIO_set_mem_eof_return) are spelled as the ctrl calls they expand to.
#define UVSCHED_OPENSSL_FUNCTIONS(X)    \
  X(ERR_get_error)                      \
  X(ERR_error_string_n)                 \
  X(ERR_clear_error)                    \
  X(X509_get_subject_name)              \
  X(X509_NAME_get_index_by_NID)         \
  X(X509_NAME_get_entry)                \
  X(X509_NAME_ENTRY_get_data)           \
  X(ASN1_STRING_get0_data)              \
  X(ASN1_STRING_length)                 \
  X(X509_verify_cert_error_string)      \
  X(X509_VERIFY_PARAM_set1_ip_asc)      \
  X(TLS_server_method)                  \
  X(TLS_client_method)                  \
  X(SSL_CTX_new)                        \
  X(SSL_CTX_free)                       \
  X(SSL_CTX_ctrl)                       \
  X(SSL_CTX_use_certificate_chain_file) \
  X(SSL_CTX_use_PrivateKey_file)        \
  X(SSL_CTX_check_private_key)          \
  X(SSL_CTX_load_verify_locations)      \
  X(SSL_CTX_set_default_verify_paths)   \
  X(SSL_load_client_CA_file)            \
  X(SSL_CTX_set_client_CA_list)         \
  X(SSL_CTX_set_verify)                 \
  X(SSL_CTX_set_session_id_context)     \
  X(SSL_new)                            \
  X(SSL_free)                           \
  X(SSL_ctrl)                           \
  X(SSL_set_bio)                        \
  X(SSL_set_accept_state)               \
  X(SSL_set_connect_state)              \
  X(SSL_get0_param)                     \
  X(SSL_set1_host)                      \
  X(SSL_do_handshake)                   \
  X(SSL_get_error)                      \
  X(SSL_get_verify_result)              \
  X(SSL_get0_peer_certificate)          \
  X(SSL_read)                           \
  X(SSL_write)                          \
  X(BIO_new)                            \
  X(BIO_free)                           \
  X(BIO_s_mem)                          \
  X(BIO_ctrl)                           \
  X(BIO_ctrl_pending)                   \
  X(BIO_read)                           \
  X(BIO_write)                          \
  X(SHA256)                             \
  X(CRYPTO_memcmp)                      \
  X(SSL_CTX_set_cipher_list)            \
  X(X509_check_ca)                      \
  X(X509_get_extension_flags)           \
  X(X509_get_extended_key_usage)        \
  X(SSL_shutdown)                       \
  X(SSL_CTX_get_cert_store)             \
  X(X509_STORE_add_lookup)              \
  X(X509_LOOKUP_file)                   \
  X(X509_load_crl_file)                 \
  X(X509_STORE_set_flags)               \
  X(X509_STORE_CTX_new)                 \
  X(X509_STORE_CTX_init)                \
  X(X509_STORE_CTX_free)                \
  X(X509_verify_cert)                   \
  X(SSL_get_peer_cert_chain)

namespace uvsched {

struct OpenSsl {
#define UVSCHED_OPENSSL_POINTER(name) decltype(&::name) name = nullptr;
  UVSCHED_OPENSSL_FUNCTIONS(UVSCHED_OPENSSL_POINTER)
#undef UVSCHED_OPENSSL_POINTER

  // The table, loaded once per process and kept for its life; nullptr, with
  // *error saying why, when the libraries or one of the functions are missing.
  // It reads files, so a daemon calls it while starting, not on a busy loop.
  static const OpenSsl* get(std::string* error);
};

}  // namespace uvsched
