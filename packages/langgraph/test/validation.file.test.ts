import { validateOn } from './support/validation.js';

validateOn('file');
