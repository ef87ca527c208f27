/** The header carrying the RSA-protected AES key, on requests and encrypted answers (SPEC §9). */
export const ENCRYPT_HEADER = 'encrypt-key';
