// TLS as a byte engine: ciphertext in, plaintext out, and back, through
// OpenSSL memory BIOs (OpenSSL is loaded with the first context; see
// openssl_library.h). It owns no socket, so the server's and the client's
// connections drive it from their libuv read and write paths, and tests can
// wire two sessions back to back without a network.
#pragma once

#include <memory>
#include <string>
#include <string_view>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;
typedef struct bio_st BIO;

namespace uvsched {

struct OpenSsl;
class TlsSession;

// Certificates and settings shared by every session of one side.
class TlsContext {
 public:
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A server's certificate chain and key (PEM files). With client_ca, a client
  // certificate is asked for and, when one is sent, must verify against it;
  // clients without one still connect (they authenticate with tokens). With
  // client_crl (PEM, one CRL per client CA), a client certificate must also
  // not be revoked, and a CRL past its next update refuses every one.
  static std::unique_ptr<TlsContext> server(const std::string& cert_file, const std::string& key_file,
                                            const std::string& client_ca_file, std::string* error,
                                            const std::string& client_crl_file = {});
  // A client that verifies servers against ca_file, or the system's CAs when empty.
  static std::unique_ptr<TlsContext> client(const std::string& ca_file, std::string* error);

  // Whether the certificate a session's peer showed would verify against this
  // context now (its CAs and CRL, which may be newer than the session's):
  // true when it showed none.
  bool still_trusts(const TlsSession& session) const;

  SSL_CTX* native() const { return ctx_; }
  bool is_server() const { return server_; }
  const OpenSsl& api() const { return api_; }

 private:
  TlsContext(const OpenSsl& api, SSL_CTX* ctx, bool server) : api_(api), ctx_(ctx), server_(server) {}
  // OpenSSL loaded, and a context of that side that speaks TLS 1.2 or later.
  static std::unique_ptr<TlsContext> make(bool server, std::string* error);
  const OpenSsl& api_;
  SSL_CTX* ctx_;
  bool server_;
};

// One connection's TLS state. Every call appends the ciphertext to send to *out.
class TlsSession {
 public:
  friend class TlsContext;  // still_trusts reads the peer's certificate
  // host: the name a client checks the server's certificate against (and sends as SNI).
  TlsSession(const TlsContext& ctx, std::string_view host = {});
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // A client's first flight (ClientHello); servers write nothing first.
  bool start(std::string* out);
  // Ciphertext from the peer; the plaintext it carried is appended to *plain.
  // False on a protocol or verification failure (error() says which).
  bool receive(std::string_view cipher, std::string* plain, std::string* out);
  // Plaintext to send. Held until the handshake is done, then encrypted.
  bool send(std::string_view plain, std::string* out);
  // The close_notify alert, for a session that is ending in good order: the
  // peer then knows the data was not cut short by an attacker. False when
  // there is none to send (no handshake yet, or the session failed).
  bool close_notify(std::string* out);

  bool handshake_done() const { return handshake_done_; }
  // The peer sent close_notify: it will send nothing more.
  bool peer_closed() const { return peer_closed_; }
  // The common name of a verified peer certificate; empty when none was sent.
  const std::string& peer_name() const { return peer_name_; }
  // Why a verified client certificate stands for no one (empty: it does, or none was sent).
  const std::string& peer_refused() const { return peer_refused_; }
  const std::string& error() const { return error_; }

 private:
  bool step_handshake(std::string* out);
  bool encrypt(std::string_view plain, std::string* out);
  void drain(std::string* out);
  bool fail(std::string_view what);

  const OpenSsl& api_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // ciphertext from the peer, read by OpenSSL
  BIO* out_ = nullptr;  // ciphertext OpenSSL wrote for the peer
  bool handshake_done_ = false;
  bool failed_ = false;
  bool peer_closed_ = false;
  std::string held_;  // plaintext sent before the handshake finished
  std::string peer_name_;
  std::string peer_refused_;
  std::string error_;
};

}  // namespace uvsched
