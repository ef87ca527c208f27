import home from './home.ts';
import help from './help.ts';
import center from './center.ts';
import datahub from './datahub.ts';
import safe from './safe.ts';
import site from './site.ts';
import wallet from './wallet.ts';
import compute from './compute.ts';
// Issue #9 (web)
import llm from './llm.ts';
// Issue #10 (web): billing changes; (images, clone, data copy)
import ops from './ops.ts';
import images from './images.ts';

/** The namespaces the sign-in screens don't use: one chunk, loaded with the first other page. */
export default { home, help, center, datahub, safe, site, wallet, compute, llm, ops, images };
