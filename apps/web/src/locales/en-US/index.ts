import common from './common.ts';
import nav from './nav.ts';
import auth from './auth.ts';
import home from './home.ts';
import help from './help.ts';
import center from './center.ts';
import datahub from './datahub.ts';
import captcha from './captcha.ts';
import safe from './safe.ts';
import site from './site.ts';
import wallet from './wallet.ts';
import compute from './compute.ts';
// Issue #9 (web)
import llm from './llm.ts';
// Issue #10 (web): billing changes; (images, clone, data copy)
import ops from './ops.ts';
import images from './images.ts';

/** English, loaded only when chosen: most visitors never download it. */
export const en = { common, nav, auth, home, help, center, datahub, captcha, safe, site, wallet, compute, llm, ops, images };
