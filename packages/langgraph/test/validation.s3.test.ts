import { validateOn } from './support/validation.js';

validateOn('s3');
