import { validateOn } from './support/validation.js';

validateOn('postgres');
