#include "reactor/tls.h"

#include <arpa/inet.h>

#include "reactor/openssl_library.h"

namespace uvsched {
namespace {

std::string openssl_error(const OpenSsl& api, std::string_view what) {
  std::string text(what);
  unsigned long code;
  while ((code = api.ERR_get_error()) != 0) {
    char buf[256];
    api.ERR_error_string_n(code, buf, sizeof buf);
    text += ": ";
    text += buf;
  }
  return text;
}

bool is_ip_literal(const std::string& host) {
  unsigned char addr[16];
  return inet_pton(AF_INET, host.c_str(), addr) == 1 || inet_pton(AF_INET6, host.c_str(), addr) == 1;
}

std::string common_name(const OpenSsl& api, X509* cert) {
  X509_NAME* name = api.X509_get_subject_name(cert);
  int at = name ? api.X509_NAME_get_index_by_NID(name, NID_commonName, -1) : -1;
  if (at < 0) return {};
  ASN1_STRING* data = api.X509_NAME_ENTRY_get_data(api.X509_NAME_get_entry(name, at));
  return std::string(reinterpret_cast<const char*>(api.ASN1_STRING_get0_data(data)),
                     static_cast<size_t>(api.ASN1_STRING_length(data)));
}

}  // namespace

TlsContext::~TlsContext() { api_.SSL_CTX_free(ctx_); }

std::unique_ptr<TlsContext> TlsContext::make(bool server, std::string* error) {
  const OpenSsl* loaded = OpenSsl::get(error);
  if (!loaded) return nullptr;
  const OpenSsl& api = *loaded;
  api.ERR_clear_error();
  SSL_CTX* ctx = api.SSL_CTX_new(server ? api.TLS_server_method() : api.TLS_client_method());
  if (!ctx) return *error = openssl_error(api, "cannot create a TLS context"), nullptr;
  // SSL_CTX_set_min_proto_version, a macro over SSL_CTX_ctrl.
  api.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, nullptr);
  // TLS 1.2 only with forward secrecy and AEAD (no static RSA, no CBC); TLS 1.3's are all so.
  if (api.SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1) {
    api.SSL_CTX_free(ctx);
    return *error = openssl_error(api, "cannot set the TLS 1.2 cipher suites"), nullptr;
  }
  return std::unique_ptr<TlsContext>(new TlsContext(api, ctx, server));
}

std::unique_ptr<TlsContext> TlsContext::server(const std::string& cert_file, const std::string& key_file,
                                               const std::string& client_ca_file, std::string* error,
                                               const std::string& client_crl_file) {
  std::unique_ptr<TlsContext> out = make(true, error);
  if (!out) return nullptr;
  const OpenSsl& api = out->api_;
  SSL_CTX* ctx = out->ctx_;
  if (api.SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1)
    return *error = openssl_error(api, "cannot load --tls-cert " + cert_file), nullptr;
  if (api.SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return *error = openssl_error(api, "cannot load --tls-key " + key_file), nullptr;
  if (api.SSL_CTX_check_private_key(ctx) != 1)
    return *error = openssl_error(api, "--tls-key does not match --tls-cert"), nullptr;
  if (!client_ca_file.empty()) {
    if (api.SSL_CTX_load_verify_locations(ctx, client_ca_file.c_str(), nullptr) != 1)
      return *error = openssl_error(api, "cannot load --tls-client-ca " + client_ca_file), nullptr;
    STACK_OF(X509_NAME)* names = api.SSL_load_client_CA_file(client_ca_file.c_str());
    if (names) api.SSL_CTX_set_client_CA_list(ctx, names);
    api.SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);  // asked for, checked if sent, not required
    static const unsigned char kSessionContext[] = "uvsched";
    api.SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  }
  if (!client_crl_file.empty()) {
    if (client_ca_file.empty()) return *error = "--tls-client-crl needs --tls-client-ca", nullptr;
    X509_STORE* store = api.SSL_CTX_get_cert_store(ctx);
    X509_LOOKUP* lookup = store ? api.X509_STORE_add_lookup(store, api.X509_LOOKUP_file()) : nullptr;
    if (!lookup || api.X509_load_crl_file(lookup, client_crl_file.c_str(), X509_FILETYPE_PEM) < 1)
      return *error = openssl_error(api, "cannot load --tls-client-crl " + client_crl_file), nullptr;
    api.X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);  // the client's own certificate against its CA's CRL
  }
  return out;
}

std::unique_ptr<TlsContext> TlsContext::client(const std::string& ca_file, std::string* error) {
  std::unique_ptr<TlsContext> out = make(false, error);
  if (!out) return nullptr;
  const OpenSsl& api = out->api_;
  SSL_CTX* ctx = out->ctx_;
  int cas = ca_file.empty() ? api.SSL_CTX_set_default_verify_paths(ctx)
                            : api.SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr);
  if (cas != 1) return *error = openssl_error(api, "cannot load CA certificates " + ca_file), nullptr;
  api.SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  return out;
}

bool TlsContext::still_trusts(const TlsSession& session) const {
  if (session.ssl_ == nullptr) return true;
  X509* cert = api_.SSL_get0_peer_certificate(session.ssl_);
  if (cert == nullptr) return true;
  X509_STORE_CTX* check = api_.X509_STORE_CTX_new();
  bool ok = check != nullptr &&
            api_.X509_STORE_CTX_init(check, api_.SSL_CTX_get_cert_store(ctx_), cert,
                                     api_.SSL_get_peer_cert_chain(session.ssl_)) == 1 &&
            api_.X509_verify_cert(check) == 1;
  api_.X509_STORE_CTX_free(check);
  api_.ERR_clear_error();
  return ok;
}

TlsSession::TlsSession(const TlsContext& ctx, std::string_view host) : api_(ctx.api()) {
  ssl_ = api_.SSL_new(ctx.native());
  in_ = api_.BIO_new(api_.BIO_s_mem());
  out_ = api_.BIO_new(api_.BIO_s_mem());
  if (!ssl_ || !in_ || !out_) {
    api_.BIO_free(in_);
    api_.BIO_free(out_);
    in_ = out_ = nullptr;
    fail("cannot create a TLS session");
    return;
  }
  // BIO_set_mem_eof_return: an empty input BIO means "wait for more", not EOF.
  api_.BIO_ctrl(in_, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nullptr);
  api_.SSL_set_bio(ssl_, in_, out_);  // the SSL owns both BIOs from here
  if (ctx.is_server()) {
    api_.SSL_set_accept_state(ssl_);
    return;
  }
  api_.SSL_set_connect_state(ssl_);
  std::string name(host);
  if (name.empty()) return;
  if (is_ip_literal(name)) {
    api_.X509_VERIFY_PARAM_set1_ip_asc(api_.SSL_get0_param(ssl_), name.c_str());
  } else {
    // SSL_set_tlsext_host_name, a macro over SSL_ctrl: the SNI.
    api_.SSL_ctrl(ssl_, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, name.data());
    api_.SSL_set1_host(ssl_, name.c_str());
  }
}

TlsSession::~TlsSession() { api_.SSL_free(ssl_); }

bool TlsSession::fail(std::string_view what) {
  if (!failed_) error_ = openssl_error(api_, what);
  failed_ = true;
  api_.ERR_clear_error();
  return false;
}

void TlsSession::drain(std::string* out) {
  char buf[16 * 1024];
  int n;
  while (api_.BIO_ctrl_pending(out_) > 0 && (n = api_.BIO_read(out_, buf, sizeof buf)) > 0)
    out->append(buf, static_cast<size_t>(n));
}

bool TlsSession::start(std::string* out) {
  if (failed_) return false;
  return step_handshake(out);
}

bool TlsSession::step_handshake(std::string* out) {
  api_.ERR_clear_error();
  int rc = api_.SSL_do_handshake(ssl_);
  drain(out);
  if (rc != 1) {
    int err = api_.SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return true;
    long verify = api_.SSL_get_verify_result(ssl_);
    if (verify != X509_V_OK)
      return fail(std::string("TLS handshake failed: certificate ") + api_.X509_verify_cert_error_string(verify));
    return fail("TLS handshake failed");
  }
  handshake_done_ = true;
  if (X509* cert = api_.SSL_get0_peer_certificate(ssl_); cert && api_.SSL_get_verify_result(ssl_) == X509_V_OK) {
    // It stands for an agent only if it was issued for that: a clientAuth
    // extended key usage, and not a CA's (which could sign more of them).
    bool client_auth = (api_.X509_get_extension_flags(cert) & EXFLAG_XKUSAGE) != 0 &&
                       (api_.X509_get_extended_key_usage(cert) & XKU_SSL_CLIENT) != 0;
    if (client_auth && api_.X509_check_ca(cert) == 0) {
      peer_name_ = common_name(api_, cert);
    } else {
      peer_refused_ = client_auth ? "a CA certificate" : "no clientAuth extended key usage";
    }
  }
  std::string held = std::move(held_);
  held_.clear();
  return held.empty() || encrypt(held, out);
}

bool TlsSession::receive(std::string_view cipher, std::string* plain, std::string* out) {
  if (failed_) return false;
  if (!cipher.empty() &&
      api_.BIO_write(in_, cipher.data(), static_cast<int>(cipher.size())) != static_cast<int>(cipher.size()))
    return fail("TLS input buffer");
  if (!handshake_done_ && (!step_handshake(out) || !handshake_done_)) return !failed_;
  char buf[16 * 1024];
  for (;;) {
    api_.ERR_clear_error();
    int n = api_.SSL_read(ssl_, buf, sizeof buf);
    if (n > 0) {
      plain->append(buf, static_cast<size_t>(n));
      continue;
    }
    int err = api_.SSL_get_error(ssl_, n);
    drain(out);  // renegotiation-free TLS 1.3 still writes tickets and key updates
    if (err == SSL_ERROR_ZERO_RETURN) peer_closed_ = true;
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_ZERO_RETURN) return true;
    return fail("TLS read failed");
  }
}

bool TlsSession::send(std::string_view plain, std::string* out) {
  if (failed_) return false;
  if (!handshake_done_) {
    held_.append(plain);
    return true;
  }
  return encrypt(plain, out);
}

bool TlsSession::close_notify(std::string* out) {
  if (failed_ || !handshake_done_) return false;
  api_.ERR_clear_error();
  api_.SSL_shutdown(ssl_);  // 0: sent, the peer's not yet seen; we do not wait for it
  api_.ERR_clear_error();
  drain(out);
  return !out->empty();
}

bool TlsSession::encrypt(std::string_view plain, std::string* out) {
  while (!plain.empty()) {
    api_.ERR_clear_error();
    int n = api_.SSL_write(ssl_, plain.data(), static_cast<int>(std::min<size_t>(plain.size(), 1 << 30)));
    if (n <= 0) return fail("TLS write failed");
    plain.remove_prefix(static_cast<size_t>(n));
  }
  drain(out);
  return true;
}

}  // namespace uvsched
